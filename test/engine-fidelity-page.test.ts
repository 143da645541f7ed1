/**
 * docs/engine-fidelity.md and its charts (docs/engine-fidelity/*.svg) are what
 * `npm run fidelity:engines` writes today (this fails when a profile or a published point
 * changed and the page was not regenerated), and every chart draws what the page says: each
 * published figure with its tolerance bar, the simulated figure, hollow when not claimed,
 * and its relative error.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fidelityChart, signedPct } from '../reports/charts/fidelity.js';
import { renderSvg } from '../reports/render.js';
import {
  CHART_DIR,
  chartSvg,
  type FidelityChartFile,
  fidelityPage,
  formatPage,
  PAGE_PATH,
} from '../scripts/fidelity-page.js';
import type { FidelityRow } from '../sim/engine/fidelity.js';
import { evaluateAll } from '../sim/engine/fidelity.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';

const committed = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');

/** The marks of an SVG that vega labels for screen readers: role, label and fill. */
function marks(svg: string): { role: string; label: string; fill: string }[] {
  const out: { role: string; label: string; fill: string }[] = [];
  for (const m of svg.matchAll(/<(?:path|line|text)\b([^>]*)>/g)) {
    const attrs = m[1] ?? '';
    const get = (name: string): string => new RegExp(`\\s${name}="([^"]*)"`).exec(attrs)?.[1] ?? '';
    if (get('aria-label') === '') continue;
    out.push({ role: get('aria-roledescription'), label: get('aria-label'), fill: get('fill') });
  }
  return out;
}

const SIM_FILL = '#1f77b4';

describe('the engine fidelity page', () => {
  const page = fidelityPage();
  const rendered: Promise<{ chart: FidelityChartFile; svg: string }[]> = Promise.all(
    page.charts.map(async (chart) => ({ chart, svg: await chartSvg(chart) })),
  );

  it('is committed as `npm run fidelity:engines` writes it, each chart linked under its profile', async () => {
    expect(formatPage(page.markdown)).toBe(committed(PAGE_PATH));
    for (const { chart, svg } of await rendered) {
      expect(svg, `${chart.path} is stale: run npm run fidelity:engines`).toBe(committed(chart.path));
      const heading = page.markdown.indexOf(`## \`${chart.profile}\``);
      const image = page.markdown.indexOf(`](${chart.path.slice('docs/'.length)})`);
      const next = page.markdown.indexOf('\n## ', heading + 1);
      expect(heading).toBeGreaterThan(0);
      expect(image).toBeGreaterThan(heading);
      expect(image).toBeLessThan(next);
    }
    const images = readdirSync(join(REPO_ROOT, CHART_DIR)).map((f) => `${CHART_DIR}/${f}`);
    expect(images.sort()).toEqual(page.charts.map((c) => c.path).sort());
    expect(page.markdown).not.toContain('No chart');
  });

  it('draws every published figure with its tolerance bar, and the simulated one labelled with its error', async () => {
    const sweeps = evaluateAll();
    const charts = await rendered;
    expect(charts.map((c) => c.chart.profile)).toEqual(sweeps.map((s) => s.sweep.profile));
    for (const [i, { rows }] of sweeps.entries()) {
      const drawn = marks(charts[i]!.svg);
      const labels = (role: string) =>
        drawn
          .filter((m) => m.role === role)
          .map((m) => m.label)
          .sort();
      const at = (r: FidelityRow) => `concurrency (log scale): ${r.concurrency}`;
      const round = (v: number) => Number(v.toPrecision(6));
      // One dash, one bar, one circle and one error label per figure, no more.
      expect(labels('tick')).toEqual(rows.map((r) => `${at(r)}; published: ${r.published}`).sort());
      expect(labels('rule mark')).toEqual(
        rows
          .map(
            (r) =>
              `${at(r)}; low: ${round(r.published * (1 - r.tolerance))}; high: ${round(r.published * (1 + r.tolerance))}`,
          )
          .sort(),
      );
      expect(labels('point')).toEqual(rows.map((r) => `${at(r)}; simulated: ${r.simulated}`).sort());
      expect(labels('text mark')).toEqual(
        rows.map((r) => `${at(r)}; simulated: ${r.simulated}; error: ${signedPct(r.relError)}`).sort(),
      );
      // Filled when claimed, hollow when not.
      const fills = drawn
        .filter((m) => m.role === 'point')
        .map((m) => m.fill)
        .sort();
      expect(fills).toEqual(rows.map((r) => (r.claimed ? SIM_FILL : 'white')).sort());
    }
  });

  it('reds the error of a claimed figure outside its tolerance, and only that one', async () => {
    const row = (concurrency: number, simulated: number, claimed: boolean): FidelityRow => ({
      profile: 'p',
      concurrency,
      metric: 'tpot_p50_ms',
      published: 10,
      simulated,
      relError: (simulated - 10) / 10,
      tolerance: 0.15,
      claimed,
    });
    const svg = await renderSvg(
      fidelityChart('p', [row(1, 10.5, true), row(4, 12, true), row(16, 14, false)]),
    );
    const errors = marks(svg).filter((m) => m.label.includes('; error: '));
    expect(errors.map((m) => [m.label.split('; error: ')[1], m.fill])).toEqual([
      ['+5.0%', '#333333'],
      ['+20.0%', '#d62728'],
      ['+40.0%', '#333333'],
    ]);
  });
});
