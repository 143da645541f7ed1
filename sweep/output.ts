/**
 * Writing a sweep's result: points.json (the report writer's sweep file, a
 * superset of its fields), recommended-rule.json and the HTML/Markdown
 * report in DIR/report.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSweepReport } from '../reports/sweep-report.js';
import type { SweepData } from '../reports/types.js';
import type { SweepResult } from './sweep.js';

/** Writes `<dir>/points.json`; returns its path. */
export function savePoints(dir: string, result: SweepResult): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'points.json');
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/**
 * Writes `<dir>/recommended-rule.json`, the recommended rule ready to POST
 * (`curl -d @recommended-rule.json`), when some point met every SLO; returns
 * its path, or undefined when there is no recommendation (an older file is
 * removed, so the directory never holds a rule the sweep no longer recommends).
 */
export function saveRule(dir: string, result: SweepResult): string | undefined {
  const path = join(dir, 'recommended-rule.json');
  const rule = result.recommendation.feasible ? result.recommendation.rule : undefined;
  if (rule === undefined) {
    rmSync(path, { force: true });
    return undefined;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path, `${JSON.stringify(rule, null, 2)}\n`);
  return path;
}

/**
 * Renders the sweep report into `<dir>/report` (re-render later with
 * `sluice report DIR`). Returns the HTML path.
 */
export async function writeReportOf(dir: string, result: SweepResult): Promise<string> {
  // SweepResult carries every SweepData field (points add per-seed goodput, failed SLOs and rank).
  const files = await writeSweepReport(join(dir, 'report'), result as unknown as SweepData);
  return files.html;
}
