/**
 * Writes docs/engine-fidelity.md and its charts (docs/engine-fidelity/<profile>.svg): for every
 * built-in engine profile, the published vLLM figures it is held to, the simulated ones and
 * their relative errors, and the figures it does not claim and why. `npm run fidelity:engines`.
 * Chart images no profile draws any more are deleted.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { CHART_DIR, chartSvg, fidelityPage, formatPage, PAGE_PATH } from './fidelity-page.js';

const { markdown, charts } = fidelityPage();
mkdirSync(join(REPO_ROOT, CHART_DIR), { recursive: true });
const written = new Set<string>();
for (const chart of charts) {
  writeFileSync(join(REPO_ROOT, chart.path), await chartSvg(chart));
  written.add(chart.path);
  console.log(`wrote ${chart.path}`);
}
for (const name of readdirSync(join(REPO_ROOT, CHART_DIR))) {
  const path = `${CHART_DIR}/${name}`;
  if (name.endsWith('.svg') && !written.has(path)) {
    rmSync(join(REPO_ROOT, path));
    console.log(`removed ${path}`);
  }
}
writeFileSync(join(REPO_ROOT, PAGE_PATH), formatPage(markdown));
console.log(`wrote ${PAGE_PATH}`);
