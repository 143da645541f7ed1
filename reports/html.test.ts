import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { loadBundles } from './bundles.js';
import { decisionsChart } from './charts/decisions.js';
import { tenantChart } from './charts/tenants.js';
import { htmlReport } from './html.js';
import { fixtureSeconds, fixtureSummary } from './test/fixtures.js';
import type { Report } from './types.js';

const summary = fixtureSummary();
const report: Report = {
  title: 'Run of <b>"spike"</b> & co',
  subtitle: 'seed 7',
  sections: [
    {
      kind: 'table',
      title: 'Tenants',
      columns: ['tenant', 'good'],
      rows: summary.tenants.map((t) => [t.tenant, t.good]),
      csv: 'tenants.csv',
    },
    { kind: 'text', title: 'Findings', paragraphs: ['a < b'], bullets: ['x & y'] },
    { kind: 'code', title: 'Rule', language: 'json', text: '{"a": "</script>"}' },
    {
      kind: 'chart',
      name: 'decisions',
      title: 'Decisions',
      caption: 'per <second>',
      spec: decisionsChart(fixtureSeconds(10)),
    },
    { kind: 'chart', name: 'tenants', title: 'Tenants chart', spec: tenantChart(summary.tenants) },
  ],
};
const html = htmlReport(report, { fileLinks: true });

/** The inline script elements: attributes and content. */
function scripts(page: string): { attrs: string; body: string }[] {
  return [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => ({
    attrs: m[1] ?? '',
    body: m[2] ?? '',
  }));
}

describe('HTML report', () => {
  it('loads no script, style or image from anywhere else', () => {
    // The page outside the inlined libraries (whose code mentions tags and URLs in strings).
    const page = html.replace(/<script data-lib=[^>]*>[\s\S]*?<\/script>/g, '<script></script>');
    expect(page.length).toBeLessThan(html.length / 10);
    expect(page.match(/<script[^>]*\bsrc=/i)).toBeNull();
    expect(page.match(/<link\b/i)).toBeNull();
    expect(page.match(/<img\b/i)).toBeNull();
    expect(page.match(/https?:\/\/(?!vega\.github\.io\/schema\/)/)).toBeNull();
    expect(page.match(/@import|url\(/i)).toBeNull();
  });

  it('inlines the vega, vega-lite and vega-embed bundles, in load order', () => {
    const libs = scripts(html).filter((s) => s.attrs.includes('data-lib'));
    expect(libs.map((s) => s.attrs.trim())).toEqual([
      'data-lib="vega@6.4.0"',
      'data-lib="vega-lite@6.4.3"',
      'data-lib="vega-embed@7.3.0"',
    ]);
    for (const b of loadBundles()) expect(html).toContain(b.code.slice(0, 200));
    expect(html).toContain('vegaEmbed(el, spec');
  });

  it('carries every chart spec in a JSON script block that parses back to the spec', () => {
    const blocks = scripts(html).filter((s) => s.attrs.includes('application/json'));
    expect(blocks.map((b) => b.attrs.trim())).toEqual([
      'type="application/json" id="spec-decisions"',
      'type="application/json" id="spec-tenants"',
    ]);
    const tenantsSpec = JSON.parse(blocks[1]?.body ?? '') as unknown;
    expect(tenantsSpec).toEqual(JSON.parse(JSON.stringify(tenantChart(summary.tenants))));
    // The tenant named "<script>x</script>" does not end the block early.
    expect(blocks[1]?.body).not.toContain('</');
    expect(html).toContain('<div class="chart" id="view-tenants" data-spec="spec-tenants"></div>');
  });

  it('escapes every inserted text', () => {
    expect(html).toContain('<title>Run of &lt;b&gt;&quot;spike&quot;&lt;/b&gt; &amp; co</title>');
    expect(html).toContain('<td>&lt;script&gt;x&lt;/script&gt;</td>');
    expect(html).toContain('<td>acme, inc.</td>');
    expect(html).toContain('<p>a &lt; b</p>');
    expect(html).toContain('<li>x &amp; y</li>');
    expect(html).toContain('{&quot;a&quot;: &quot;&lt;/script&gt;&quot;}');
    expect(html).toContain('<p class="caption">per &lt;second&gt;</p>');
  });

  it('links each chart to its files and each table to its CSV', () => {
    expect(html).toContain(
      '<a href="decisions.png">PNG</a> · <a href="decisions.svg">SVG</a> · <a href="decisions.vl.json">Vega-Lite</a>',
    );
    expect(html).toContain('<a href="tenants.csv">tenants.csv</a>');
    expect(htmlReport(report, { fileLinks: false })).not.toContain('decisions.png');
  });

  it('rejects a chart name that is not a safe id', () => {
    const bad: Report = {
      title: 't',
      sections: [{ kind: 'chart', name: 'a"b', title: 'x', spec: decisionsChart([]) }],
    };
    expect(() => htmlReport(bad)).toThrow(/chart name/);
  });

  it('opens offline: the inlined bundles load without network or DOM and draw every embedded spec', async () => {
    const ctx: Record<string, unknown> = {
      structuredClone,
      setTimeout,
      clearTimeout,
      setInterval,
      clearInterval,
      console,
      fetch: () => Promise.reject(new Error('network access attempted')),
    };
    ctx.self = ctx;
    ctx.window = ctx;
    ctx.globalThis = ctx;
    vm.createContext(ctx);
    for (const s of scripts(html).filter((x) => x.attrs.includes('data-lib'))) vm.runInContext(s.body, ctx);
    expect(typeof ctx.vegaEmbed).toBe('function');
    for (const block of scripts(html).filter((x) => x.attrs.includes('application/json'))) {
      ctx.__spec = block.body;
      const svg = (await vm.runInContext(
        `(async () => {
          const view = new vega.View(vega.parse(vegaLite.compile(JSON.parse(__spec)).spec), { renderer: 'none' });
          try { return await view.toSVG(); } finally { view.finalize(); }
        })()`,
        ctx,
      )) as string;
      expect(svg).toMatch(/class="mark-(area|rect)/);
    }
  });
});
