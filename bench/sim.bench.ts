/**
 * `npm run bench:sim [-- --json] [-- --scenario FILE]`: runs the standard
 * scenario (bench/sim-standard.yaml: 1 simulated hour at 1,000 req/s over 112
 * engines) with per-request records streamed to a temporary directory, and
 * prints events/s, simulated seconds per wall second, peak memory and wall time, and the
 * process's CPU time over the run (user + system, GC threads included): on a shared machine a
 * run's wall time also counts the time other processes held the CPU, its CPU time does not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runScenario } from '../sim/run/run.js';
import { FileSink } from '../sim/run/sinks.js';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { loadScenario } from '../sim/scenario/load.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const i = args.indexOf('--scenario');
  const file = i >= 0 ? args[i + 1]! : join(REPO_ROOT, 'bench', 'sim-standard.yaml');
  const scenario = await loadScenario(file);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  try {
    const sink = new FileSink(
      dir,
      scenario.endpoints.map((e) => e.id),
    );
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const summary = await runScenario(scenario, { sink });
    const wallS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const out = {
      events_per_s: Math.round(summary.events / wallS),
      sim_seconds_per_wall_second: Math.round((scenario.duration_s / wallS) * 10) / 10,
      peak_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
      wall_s: Math.round(wallS * 100) / 100,
      cpu_s: Math.round((cpu.user + cpu.system) / 1e4) / 100,
      events: summary.events,
      attempts: summary.attempts,
      goodput_rps: summary.goodput_rps,
      max_inflight: summary.max_inflight,
    };
    if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      process.stdout.write(
        [
          `simulator benchmark: ${scenario.name} (${scenario.duration_s} s simulated, node ${process.version})`,
          `  wall time:                 ${out.wall_s} s (CPU ${out.cpu_s} s)`,
          `  events:                    ${out.events.toLocaleString('en-US')} (${out.events_per_s.toLocaleString('en-US')}/s)`,
          `  simulated s per wall s:    ${out.sim_seconds_per_wall_second}`,
          `  peak RSS:                  ${out.peak_rss_mib} MiB`,
          `  attempts / goodput:        ${out.attempts.toLocaleString('en-US')} / ${out.goodput_rps} req/s`,
          '',
        ].join('\n'),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
