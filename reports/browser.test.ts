/**
 * The HTML reports in a real browser: Debian's Chromium, driven by
 * playwright-core, opens each report offline and every chart must draw marks
 * with no console error. `.ci/run` installs Chromium. Without Chromium the test is skipped with one
 * line saying how to install it, except under CI=true, where it fails (reports/test/chromium.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCliffReport } from './cliff-report.js';
import { writeRunReport } from './run-report.js';
import { writeSweepReport } from './sweep-report.js';
import { browserTestPlan } from './test/chromium.js';
import { fixtureCliff, fixtureSweep, writeFixtureRun } from './test/fixtures.js';

const plan = browserTestPlan(process.env);
if (plan.action === 'skip') process.stderr.write(`${plan.line}\n`);
const chromiumPath = plan.action === 'run' ? plan.path : '';
const dir = mkdtempSync(join(tmpdir(), 'sluice-browser-'));
let browser: Browser;

beforeAll(async () => {
  if (plan.action !== 'run') {
    if (plan.action === 'fail') throw new Error(plan.line);
    return;
  }
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a report offline; returns console errors, chart count and marks drawn per chart. */
async function open(
  html: string,
): Promise<{ errors: string[]; charts: number; marks: number[]; requests: string[] }> {
  const context = await browser.newContext({ offline: true });
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => {
    if (!r.url().startsWith('file://')) requests.push(r.url());
  });
  await page.goto(pathToFileURL(html).href);
  // Browser-side code as strings: the project compiles without the DOM library.
  await page.waitForFunction(
    `[...document.querySelectorAll('div.chart[data-spec]')].every(
       (c) => c.getAttribute('data-rendered') === 'true' || c.classList.contains('chart-error'))`,
    undefined,
    { timeout: 30_000 },
  );
  const marks = (await page.evaluate(
    `[...document.querySelectorAll('div.chart[data-spec]')].map(
       (c) => c.querySelectorAll('svg g[class^="mark-"] path, svg g[class^="mark-"] line, svg g[class^="mark-"] rect').length)`,
  )) as number[];
  await context.close();
  return { errors, charts: marks.length, marks, requests };
}

describe.skipIf(plan.action === 'skip')('HTML reports in headless Chromium', () => {
  it('draws every chart of a run report with no console error and no network request', async () => {
    const run = join(dir, 'run');
    writeFixtureRun(run);
    const files = await writeRunReport(run);
    const r = await open(files.html);
    expect(r.errors).toEqual([]);
    expect(r.requests).toEqual([]);
    expect(r.charts).toBeGreaterThanOrEqual(4);
    for (const n of r.marks) expect(n).toBeGreaterThan(0);
  }, 60_000);

  it('draws the sizing heatmap and the cliff chart', async () => {
    const sweep = await writeSweepReport(join(dir, 'sweep'), fixtureSweep());
    const cliff = await writeCliffReport(join(dir, 'cliff'), { points: fixtureCliff() });
    for (const html of [sweep.html, cliff.html]) {
      const r = await open(html);
      expect(r.errors).toEqual([]);
      expect(r.charts).toBeGreaterThan(0);
      for (const n of r.marks) expect(n).toBeGreaterThan(0);
    }
  }, 60_000);
});
