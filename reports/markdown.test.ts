import { describe, expect, it } from 'vitest';
import { decisionsChart } from './charts/decisions.js';
import { markdownReport } from './markdown.js';
import { fixtureSeconds } from './test/fixtures.js';
import type { Report } from './types.js';

const report: Report = {
  title: 'Run *spike*',
  subtitle: 'seed 7',
  sections: [
    {
      kind: 'table',
      title: 'Tenants',
      columns: ['tenant', 'good'],
      rows: [
        ['a|b', 1],
        ['<c>', 2],
      ],
      csv: 'tenants.csv',
    },
    { kind: 'text', title: 'Findings', paragraphs: ['p'], bullets: ['one', 'two'] },
    { kind: 'code', title: 'Rule', language: 'json', text: '{\n  "a": "```"\n}' },
    {
      kind: 'chart',
      name: 'decisions',
      title: 'Decisions [all]',
      caption: 'c',
      spec: decisionsChart(fixtureSeconds(3)),
    },
  ],
};

describe('Markdown report', () => {
  const md = markdownReport(report);

  it('embeds each chart as its PNG by relative path, with links to the spec and SVG', () => {
    expect(md).toContain('![Decisions \\[all\\]](decisions.png)');
    expect(md).toContain('[Vega-Lite](decisions.vl.json) · [SVG](decisions.svg)');
    expect(markdownReport(report, { imageDir: 'report/' })).toContain('](report/decisions.png)');
  });

  it('writes tables with escaped cells and a link to their CSV', () => {
    expect(md).toContain('| tenant | good |\n| --- | --- |\n| a\\|b | 1 |\n| &lt;c&gt; | 2 |');
    expect(md).toContain('CSV: [tenants.csv](tenants.csv)');
  });

  it('fences code with a fence longer than any in the text', () => {
    expect(md).toContain('````json\n{\n  "a": "```"\n}\n````');
  });

  it('puts title, headings and bullets in order', () => {
    expect(md.startsWith('# Run \\*spike\\*\n\nseed 7\n\n## Tenants')).toBe(true);
    expect(md).toContain('## Findings\n\np\n\n- one\n- two');
    expect(md.endsWith('\n')).toBe(true);
  });
});
