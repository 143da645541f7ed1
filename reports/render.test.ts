import type { LoggerInterface } from 'vega';
import { compile } from 'vega-lite';
import { describe, expect, it } from 'vitest';
import { ceilingChart } from './charts/ceiling.js';
import { cliffChart } from './charts/cliff.js';
import { decisionsChart } from './charts/decisions.js';
import { sweepChart } from './charts/heatmap.js';
import { latencyChart } from './charts/latency.js';
import { tenantChart } from './charts/tenants.js';
import { renderChart, svgSize } from './render.js';
import { fixtureCliff, fixtureSeconds, fixtureSummary, fixtureSweep } from './test/fixtures.js';
import type { VegaLiteSpec } from './types.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the IHDR chunk, which follows the signature. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(12, 16).toString('ascii')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

const small: VegaLiteSpec = {
  title: 'Small <chart> & title',
  width: 120,
  height: 60,
  config: { font: 'DejaVu Sans', background: 'white' },
  data: {
    values: [
      { x: 1, y: 2 },
      { x: 2, y: 3 },
    ],
  },
  mark: 'line',
  encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } },
};

describe('rendering', () => {
  it('puts the title text into the SVG, escaped', async () => {
    const { svg } = await renderChart(small);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('Small &lt;chart&gt; &amp; title');
    expect(svg).toContain('font-family="DejaVu Sans"');
  });

  it('writes a PNG of the SVG size times the scale', async () => {
    const r = await renderChart(small, { pngScale: 1.5 });
    expect(r.png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(pngSize(r.png)).toEqual({ width: Math.round(r.width * 1.5), height: Math.round(r.height * 1.5) });
    expect(svgSize(r.svg)).toEqual({ width: r.width, height: r.height });
  });

  it('renders byte-identical SVG and PNG twice', async () => {
    const spec = decisionsChart(fixtureSeconds(20));
    const a = await renderChart(spec);
    const b = await renderChart(spec);
    expect(a.svg).toBe(b.svg);
    expect(a.png.equals(b.png)).toBe(true);
  });

  it('renders the axis and legend text of a real chart', async () => {
    const { svg } = await renderChart(ceilingChart(fixtureSeconds(20)));
    for (const text of [
      'time (s)',
      'requests in flight',
      'ceiling in force',
      'adaptive ceiling',
      'tightened',
    ]) {
      expect(svg).toContain(`>${text}<`);
    }
  });
});

describe('chart specs', () => {
  const sweep = fixtureSweep();
  const specs: [string, VegaLiteSpec | null][] = [
    ['ceiling', ceilingChart(fixtureSeconds(20))],
    ['decisions', decisionsChart(fixtureSeconds(20))],
    ['latency', latencyChart(fixtureSeconds(20))],
    ['cliff', cliffChart(fixtureCliff())],
    ['tenants', tenantChart(fixtureSummary().tenants)],
    ['heatmap', sweepChart(sweep)],
    ['heatmap, three fields', sweepChart({ ...sweep, varied: [...sweep.varied, 'z'] })],
    ['sweep line', sweepChart({ ...sweep, varied: ['fc_max_outstanding'] })],
  ];

  it.each(specs)('%s compiles to Vega without warnings', (_name, spec) => {
    expect(spec).not.toBeNull();
    const warnings: unknown[] = [];
    const logger: LoggerInterface = {
      level: () => logger,
      error: (...a: unknown[]) => {
        warnings.push(a);
        return logger;
      },
      warn: (...a: unknown[]) => {
        warnings.push(a);
        return logger;
      },
      info: () => logger,
      debug: () => logger,
    };
    compile(spec as VegaLiteSpec, { logger });
    expect(warnings).toEqual([]);
  });
});
