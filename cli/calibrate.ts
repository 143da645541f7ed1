/**
 * `sluice calibrate <result.json...> [--base PROFILE] [--out FILE]`: fits a deployment
 * profile's physical terms (HBM efficiency, host work per sequence, MFU, frontend delay) to
 * the JSON result files of `vllm bench serve --save-result` (closed loops at several
 * --max-concurrency, open loops at several --request-rate with their --burstiness, or both),
 * prints each point measured vs fitted with its relative errors, marking those outside ±10%
 * TPOT / ±20% TTFT, and writes the fitted terms as JSON (a scenario's engine group reads it
 * with `profile_file`). Bad input (not a result, a field missing or out of bounds, one point
 * only, contradictory points) exits 2 naming the file, the field, the value and the bound.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import {
  type BenchPoint,
  CalibrationInputError,
  calibrate,
  calibratedProfileFile,
  loadOf,
  parseBenchResult,
} from '../sim/engine/calibrate.js';
import { formatProfileFile } from '../sim/engine/profile-file.js';
import { DEPLOYMENT_PROFILES, type DeploymentProfileId } from '../sim/engine/profiles.js';
import { parseScrapeSpec, scrapePoint } from './calibrate-scrape.js';
import { reportError, UsageError } from './errors.js';

const pct = (fit: number, meas: number): string => {
  const e = (fit / meas - 1) * 100;
  return `${e >= 0 ? '+' : ''}${e.toFixed(1)}%`;
};

/** The bounds the table marks: TPOT p50 within 10%, TTFT p50 within 20% (issue #17). */
const TPOT_BOUND = 0.1;
const TTFT_BOUND = 0.2;
const mark = (fit: number, meas: number, bound: number): string =>
  Math.abs(fit / meas - 1) <= bound ? '' : ` (outside ±${bound * 100}%)`;

function readPoint(file: string): BenchPoint {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    throw new CalibrationInputError(`${file}: not JSON (${(err as Error).message})`);
  }
  return parseBenchResult(json, basename(file));
}

export function calibrateCommand(): Command {
  return new Command('calibrate')
    .description(
      'fit an engine profile to vllm bench serve result files or vllm:* scrapes and print measured vs fitted',
    )
    .argument(
      '[results...]',
      'vllm bench serve --save-result JSON files, one per --max-concurrency or --request-rate',
    )
    .option(
      '--scrape <spec>',
      'a vllm:* /metrics scrape as a point: AFTER[,BEFORE],interval=S[,concurrency=N] (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      '--base <profile>',
      'built-in profile whose model, hardware and limits the fit starts from',
      (v: string) => {
        if (!(v in DEPLOYMENT_PROFILES)) {
          throw new InvalidArgumentError(
            `--base: ${JSON.stringify(v)} is not one of ${Object.keys(DEPLOYMENT_PROFILES).join(', ')}`,
          );
        }
        return v;
      },
      'llama-3.1-8b-h100',
    )
    .option(
      '--out <file>',
      'where to write the fitted profile (YAML for a .yaml/.yml name, else JSON; for profile_file in a scenario)',
    )
    .option(
      '--no-frontend-load',
      'hold the frontend delay constant (do not fit its per-streamed-token term): for a frontend not shared with the output stream',
    )
    .action(
      (files: string[], opts: { base: string; out?: string; scrape?: string[]; frontendLoad: boolean }) => {
        try {
          const points = files.map(readPoint);
          const notes: string[] = [];
          for (const spec of opts.scrape ?? []) {
            const { point, notes: n } = scrapePoint(parseScrapeSpec(spec));
            points.push(point);
            const e = (x: number): string => `±${Math.round(x * 100)}%`;
            notes.push(
              `${point.label}: TTFT p50 ${point.ttftP50Ms} ms interpolated in bucket ${n.ttft.lower * 1000}-${n.ttft.upper * 1000} ms (error up to ${e(n.ttft.relError)}); ` +
                (n.itl === undefined
                  ? `TPOT p50 taken as the ITL mean ${point.tpotP50Ms} ms (_sum/_count: the median's bucket is too wide)`
                  : `TPOT p50 ${point.tpotP50Ms} ms interpolated in ITL bucket ${n.itl.lower * 1000}-${n.itl.upper * 1000} ms (error up to ${e(n.itl.relError)})`) +
                `; load ${loadOf(point)}`,
            );
          }
          if (points.length === 0) {
            throw new UsageError('give vllm bench serve result files, --scrape specs, or both');
          }
          const base = DEPLOYMENT_PROFILES[opts.base as DeploymentProfileId];
          const cal = calibrate(base, points, undefined, { frontendLoad: opts.frontendLoad });
          const out: string[] = [
            'point  load  TPOT p50 ms (measured fitted error)  TTFT p50 ms (measured fitted error)  output tok/s (measured fitted error)',
          ];
          let within = 0;
          for (const { point: p, fitted: f } of cal.rows) {
            const tpotMark = mark(f.tpotP50Ms, p.tpotP50Ms, TPOT_BOUND);
            const ttftMark = mark(f.ttftP50Ms, p.ttftP50Ms, TTFT_BOUND);
            if (tpotMark === '' && ttftMark === '') within++;
            out.push(
              [
                p.label,
                loadOf(p),
                `${p.tpotP50Ms} ${f.tpotP50Ms} ${pct(f.tpotP50Ms, p.tpotP50Ms)}${tpotMark}`,
                `${p.ttftP50Ms} ${f.ttftP50Ms} ${pct(f.ttftP50Ms, p.ttftP50Ms)}${ttftMark}`,
                `${p.outputTokensPerSec} ${f.outputTokensPerSec} ${pct(f.outputTokensPerSec, p.outputTokensPerSec)}`,
              ].join('  '),
            );
          }
          out.push(
            `${within} of ${cal.rows.length} points within ±${TPOT_BOUND * 100}% TPOT p50 and ±${TTFT_BOUND * 100}% TTFT p50`,
          );
          const t = cal.terms;
          out.push(
            `fitted: memory efficiency ${t.memEfficiency.toFixed(3)}, host per sequence ${t.hostPerSeqMs.toFixed(3)} ms, mfu ${t.mfu.toFixed(3)}, frontend ${t.apiOverheadMs.toFixed(2)} ms idle + ${t.frontendPerTokenMs.toFixed(3)} ms per streamed token`,
          );
          process.stdout.write(`${[...notes, ...out].join('\n')}\n`);
          if (opts.out !== undefined) {
            writeFileSync(opts.out, formatProfileFile(calibratedProfileFile(opts.base, cal), opts.out));
            process.stdout.write(`wrote ${opts.out}\n`);
          }
        } catch (err) {
          reportError(err);
        }
      },
    );
}
