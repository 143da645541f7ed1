/**
 * The self-contained HTML report: vega, vega-lite and vega-embed inlined,
 * every chart's spec in a `<script type="application/json">` block rendered
 * by vega-embed on load, tables and text escaped. No network access needed.
 */
import { type Bundle, loadBundles } from './bundles.js';
import { escapeHtml, jsonForScript, scriptSafe } from './escape.js';
import type { Report, Section } from './types.js';

/** Options of htmlReport. */
export interface HtmlOptions {
  /** Link each chart to its `.png`, `.svg` and `.vl.json` files (they sit beside the page). */
  fileLinks?: boolean;
  /** Bundles to inline (default: read from node_modules). */
  bundles?: Bundle[];
}

/** Chart names double as file stems and element ids. */
export const CHART_NAME = /^[a-z0-9][a-z0-9_-]*$/;

const STYLE = `
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1.5rem; color: #222; }
h1 { margin-bottom: 0.2rem; } .subtitle { color: #555; margin-top: 0; }
nav ul { columns: 2; padding-left: 1.2rem; }
section { margin: 2rem 0; } h2 { border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
table { border-collapse: collapse; font-size: 0.9rem; } th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } tr:nth-child(even) td { background: #fafafa; }
pre { background: #f6f8fa; padding: 0.8rem; overflow-x: auto; } .table-wrap { max-width: 100%; overflow-x: auto; }
.chart { min-height: 60px; } .chart text { font-family: "DejaVu Sans", Verdana, sans-serif; } .chart-error { color: #b00; white-space: pre-wrap; }
.files, .caption { color: #555; font-size: 0.9rem; }
`;

const BOOT = `
(function () {
  var charts = document.querySelectorAll('div.chart[data-spec]');
  Array.prototype.forEach.call(charts, function (el) {
    var specEl = document.getElementById(el.getAttribute('data-spec'));
    var fail = function (err) {
      el.className = 'chart chart-error';
      el.textContent = 'This chart could not be drawn: ' + (err && err.message ? err.message : err);
      console.error(err);
    };
    try {
      var spec = JSON.parse(specEl.textContent);
      vegaEmbed(el, spec, { renderer: 'svg', actions: { export: true, source: false, compiled: false, editor: false } })
        .then(function () { el.setAttribute('data-rendered', 'true'); })
        .catch(fail);
    } catch (err) { fail(err); }
  });
})();
`;

function sectionId(s: Section, i: number): string {
  return s.kind === 'chart' ? `chart-${s.name}` : `section-${i + 1}`;
}

function sectionTitle(s: Section): string | undefined {
  return s.title;
}

function chartHtml(s: Extract<Section, { kind: 'chart' }>, links: boolean): string {
  if (!CHART_NAME.test(s.name)) throw new Error(`chart name "${s.name}" must match ${CHART_NAME}`);
  const parts = [
    s.caption ? `<p class="caption">${escapeHtml(s.caption)}</p>` : '',
    `<div class="chart" id="view-${s.name}" data-spec="spec-${s.name}"></div>`,
    `<script type="application/json" id="spec-${s.name}">${jsonForScript(s.spec)}</script>`,
    links
      ? `<p class="files">Files: <a href="${s.name}.png">PNG</a> · <a href="${s.name}.svg">SVG</a> · <a href="${s.name}.vl.json">Vega-Lite</a></p>`
      : '',
  ];
  return parts.filter((p) => p !== '').join('\n');
}

function tableHtml(s: Extract<Section, { kind: 'table' }>): string {
  const head = `<tr>${s.columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr>`;
  const body = s.rows
    .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(String(c))}</td>`).join('')}</tr>`)
    .join('\n');
  return [
    s.caption ? `<p class="caption">${escapeHtml(s.caption)}</p>` : '',
    `<div class="table-wrap"><table>\n<thead>${head}</thead>\n<tbody>\n${body}\n</tbody>\n</table></div>`,
    s.csv ? `<p class="files">CSV: <a href="${escapeHtml(s.csv)}">${escapeHtml(s.csv)}</a></p>` : '',
  ]
    .filter((p) => p !== '')
    .join('\n');
}

function sectionBody(s: Section, links: boolean): string {
  switch (s.kind) {
    case 'chart':
      return chartHtml(s, links);
    case 'table':
      return tableHtml(s);
    case 'text':
      return [
        ...(s.paragraphs ?? []).map((p) => `<p>${escapeHtml(p)}</p>`),
        s.bullets && s.bullets.length > 0
          ? `<ul>\n${s.bullets.map((b) => `<li>${escapeHtml(b)}</li>`).join('\n')}\n</ul>`
          : '',
      ]
        .filter((p) => p !== '')
        .join('\n');
    case 'code':
      return [
        s.caption ? `<p class="caption">${escapeHtml(s.caption)}</p>` : '',
        `<pre><code class="language-${s.language}">${escapeHtml(s.text)}</code></pre>`,
      ]
        .filter((p) => p !== '')
        .join('\n');
  }
}

/** Renders a report as one self-contained HTML page. */
export function htmlReport(report: Report, opts: HtmlOptions = {}): string {
  const links = opts.fileLinks ?? false;
  const bundles = opts.bundles ?? loadBundles();
  const toc = report.sections
    .map((s, i) => ({ id: sectionId(s, i), title: sectionTitle(s) }))
    .filter((t): t is { id: string; title: string } => t.title !== undefined)
    .map((t) => `<li><a href="#${t.id}">${escapeHtml(t.title)}</a></li>`)
    .join('\n');
  const sections = report.sections
    .map((s, i) => {
      const title = sectionTitle(s);
      const heading = title === undefined ? '' : `<h2>${escapeHtml(title)}</h2>\n`;
      return `<section id="${sectionId(s, i)}">\n${heading}${sectionBody(s, links)}\n</section>`;
    })
    .join('\n');
  const scripts = bundles
    .map(
      (b) =>
        `<script data-lib="${escapeHtml(b.name)}@${escapeHtml(b.version)}">\n${scriptSafe(b.code)}\n</script>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(report.title)}</title>
<style>${STYLE}</style>
${scripts}
</head>
<body>
<header>
<h1>${escapeHtml(report.title)}</h1>
${report.subtitle ? `<p class="subtitle">${escapeHtml(report.subtitle)}</p>` : ''}
</header>
<nav><ul>
${toc}
</ul></nav>
<main>
${sections}
</main>
<script>${BOOT}</script>
</body>
</html>
`;
}
