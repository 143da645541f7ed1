/**
 * `npm run bench:sim-run-ahead [-- --duration S] [-- --pairs N] [-- --json]`: the standard
 * scenario (bench/sim-standard.yaml) shortened to S simulated seconds (default 300), run in one
 * process N times (default 4) with the engines' run-ahead on and off, alternating, records
 * streamed to files as in `bench:sim`. Prints each run's wall time and the median of each side.
 * One process and alternation put both sides under the same machine load, which on this shared
 * machine moves a single hour-long run by 20 % from one run to the next.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runScenario } from '../sim/run/run.js';
import { FileSink } from '../sim/run/sinks.js';
import { loadScenario } from '../sim/scenario/load.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0)
    throw new Error(`${name}: ${process.argv[i + 1]} is not a number above 0`);
  return v;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  const durationS = flag('--duration', 300);
  const pairs = flag('--pairs', 4);
  const base = await loadScenario(new URL('./sim-standard.yaml', import.meta.url).pathname);
  const scenario = { ...base, duration_s: durationS };
  const walls: Record<'on' | 'off', number[]> = { on: [], off: [] };
  let events: Record<'on' | 'off', number> = { on: 0, off: 0 };
  for (let p = 0; p < pairs; p++) {
    for (const side of p % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
      try {
        const sink = new FileSink(
          dir,
          scenario.endpoints.map((e) => e.id),
        );
        const t0 = performance.now();
        const s = await runScenario(scenario, { sink, runAhead: side === 'on' });
        const wall = (performance.now() - t0) / 1000;
        walls[side].push(wall);
        events = { ...events, [side]: s.events };
        if (!json) process.stdout.write(`run-ahead ${side}: ${wall.toFixed(2)} s\n`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const on = median(walls.on);
  const off = median(walls.off);
  const out = {
    duration_s: durationS,
    pairs,
    median_wall_s_on: Math.round(on * 100) / 100,
    median_wall_s_off: Math.round(off * 100) / 100,
    speedup: Math.round((off / on) * 100) / 100,
    events_on: events.on,
    events_off: events.off,
  };
  if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
  else
    process.stdout.write(
      `median wall: ${out.median_wall_s_on} s with run-ahead, ${out.median_wall_s_off} s without (${out.speedup}x); events ${out.events_on} / ${out.events_off}\n`,
    );
}

await main();
