/**
 * The goodput baseline `sluice check` compares against: per scenario (by
 * name) the figures of each seed's run, and optional per-metric tolerances.
 * Written with sorted keys so an update shows as a small diff.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { SweepInputError } from './errors.js';
import { METRIC_NAMES } from './metrics.js';
import type { ToleranceTable } from './tolerance.js';

/** Tag of a baseline file. */
export const BASELINE_KIND = 'sluice.baseline/v1';

/** One seed's run of a scenario. */
export interface BaselineRun {
  seed: number;
  /** Figures by metric name (null: the run had no value). */
  figures: Record<string, number | null>;
}

/** One scenario's entry. */
export interface BaselineEntry {
  /** The scenario file it was generated from. */
  file: string;
  runs: BaselineRun[];
}

/** A baseline file. */
export interface BaselineFile {
  kind: typeof BASELINE_KIND;
  /** Tolerances stored with the baseline (flags override them). */
  tolerances?: ToleranceTable;
  scenarios: Record<string, BaselineEntry>;
}

const tol = z.object({ rel: z.number().nonnegative(), abs: z.number().nonnegative() });
const shape = z.object({
  kind: z.literal(BASELINE_KIND),
  tolerances: z.record(z.enum(['*', ...METRIC_NAMES]), tol).optional(),
  scenarios: z.record(
    z.string(),
    z.object({
      file: z.string(),
      runs: z.array(z.object({ seed: z.number(), figures: z.record(z.string(), z.number().nullable()) })),
    }),
  ),
});

/** An empty baseline. */
export function emptyBaseline(): BaselineFile {
  return { kind: BASELINE_KIND, scenarios: {} };
}

/**
 * Reads and checks a baseline file.
 * @throws SweepInputError naming the file and what is wrong
 */
export function readBaseline(path: string): BaselineFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SweepInputError(
      code === 'ENOENT'
        ? `--baseline ${path}: no such file; create it with --update-baseline`
        : `--baseline ${path}: cannot be read (${code ?? (err as Error).message})`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SweepInputError(`--baseline ${path}: not valid JSON (${(err as Error).message})`);
  }
  const r = shape.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new SweepInputError(
      `--baseline ${path}: not a baseline file (${first ? `${first.path.join('.') || '(top)'}: ${first.message}` : 'invalid'})`,
    );
  }
  return r.data as BaselineFile;
}

/** The baseline with sorted scenario keys, as written. */
export function sortedBaseline(b: BaselineFile): BaselineFile {
  const scenarios: Record<string, BaselineEntry> = {};
  for (const name of Object.keys(b.scenarios).sort()) scenarios[name] = b.scenarios[name]!;
  return { kind: BASELINE_KIND, ...(b.tolerances ? { tolerances: b.tolerances } : {}), scenarios };
}

/** Writes a baseline file (sorted, two-space JSON, trailing newline). */
export function writeBaseline(path: string, b: BaselineFile): void {
  writeFileSync(path, `${JSON.stringify(sortedBaseline(b), null, 2)}\n`);
}
