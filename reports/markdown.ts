/**
 * The Markdown summary (`report.md`) for pull requests and CI artifacts:
 * the same sections as the HTML page, charts as PNG images by relative path.
 */
import { codeFence, escapeMarkdown } from './escape.js';
import { CHART_NAME } from './html.js';
import type { Report, Section } from './types.js';

/** Options of markdownReport. */
export interface MarkdownOptions {
  /** Directory of the chart files relative to the Markdown file (default: beside it). */
  imageDir?: string;
}

function rel(dir: string | undefined, file: string): string {
  if (dir === undefined || dir === '' || dir === '.') return file;
  return `${dir.replace(/\/+$/, '')}/${file}`;
}

function table(s: Extract<Section, { kind: 'table' }>): string {
  const head = `| ${s.columns.map(escapeMarkdown).join(' | ')} |`;
  const rule = `|${s.columns.map(() => ' --- ').join('|')}|`;
  const body = s.rows.map((r) => `| ${r.map((c) => escapeMarkdown(String(c))).join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

function body(s: Section, imageDir: string | undefined): string[] {
  switch (s.kind) {
    case 'chart': {
      if (!CHART_NAME.test(s.name)) throw new Error(`chart name "${s.name}" must match ${CHART_NAME}`);
      return [
        ...(s.caption ? [escapeMarkdown(s.caption)] : []),
        `![${escapeMarkdown(s.title)}](${rel(imageDir, `${s.name}.png`)})`,
        `[Vega-Lite](${rel(imageDir, `${s.name}.vl.json`)}) · [SVG](${rel(imageDir, `${s.name}.svg`)})`,
      ];
    }
    case 'table':
      return [
        ...(s.caption ? [escapeMarkdown(s.caption)] : []),
        table(s),
        ...(s.csv ? [`CSV: [${escapeMarkdown(s.csv)}](${rel(imageDir, s.csv)})`] : []),
      ];
    case 'text':
      return [
        ...(s.paragraphs ?? []).map(escapeMarkdown),
        ...(s.bullets && s.bullets.length > 0
          ? [s.bullets.map((b) => `- ${escapeMarkdown(b)}`).join('\n')]
          : []),
      ];
    case 'code': {
      const fence = codeFence(s.text);
      return [
        ...(s.caption ? [escapeMarkdown(s.caption)] : []),
        `${fence}${s.language}\n${s.text}\n${fence}`,
      ];
    }
  }
}

/** Renders a report as Markdown. */
export function markdownReport(report: Report, opts: MarkdownOptions = {}): string {
  const blocks: string[] = [`# ${escapeMarkdown(report.title)}`];
  if (report.subtitle) blocks.push(escapeMarkdown(report.subtitle));
  for (const s of report.sections) {
    if (s.title !== undefined) blocks.push(`## ${escapeMarkdown(s.title)}`);
    blocks.push(...body(s, opts.imageDir));
  }
  return `${blocks.join('\n\n')}\n`;
}
