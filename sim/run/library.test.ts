/**
 * Every scenario of the library runs to its end with the books balanced and
 * the gate's bounds held, and the default scenario reruns byte-identically.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const DIR = join(REPO_ROOT, 'scenarios');
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

/** The largest service ceiling and depth a scenario's gate ever has (replaces included). */
function bounds(s: Awaited<ReturnType<typeof loadScenario>>): {
  ceiling: number;
  depth: number;
  enforcing: boolean;
} {
  if (s.gate.dialect === 'smg') {
    return {
      ceiling: s.gate.smg.rate_limit_tokens_per_second
        ? Number.POSITIVE_INFINITY
        : s.gate.smg.max_concurrent_requests,
      depth: s.gate.smg.queue_size,
      enforcing: s.gate.smg.max_concurrent_requests > 0,
    };
  }
  const rules = [s.gate.rule, ...s.timeline.flatMap((e) => (e.event === 'replace' ? [e.rule] : []))];
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  const ceilings = rules.map((r) => num(r.serviceArguments.fc_max_outstanding));
  return {
    ceiling: ceilings.includes(0) ? Number.POSITIVE_INFINITY : Math.max(...ceilings),
    depth: Math.max(...rules.map((r) => num(r.serviceArguments.fc_max_queue_depth))),
    enforcing: rules.every((r) => r.serviceArguments.fc_mode === 'enforce'),
  };
}

describe('the scenario library', () => {
  it.each(FILES)(
    '%s runs with every attempt accounted for, no anomaly, and the gate within its bounds',
    async (file) => {
      const scenario = await loadScenario(join(DIR, file));
      const s = await runScenario(scenario, { sink: new MemorySink(false) });
      expect(s.conservation_ok).toBe(true);
      expect(s.anomalies.underflow).toBe(0);
      expect(s.anomalies.unknown_permit).toBe(0);
      expect(s.attempts).toBeGreaterThan(0);
      const b = bounds(scenario);
      if (b.enforcing) {
        expect(s.max_inflight).toBeLessThanOrEqual(b.ceiling);
        expect(s.max_queued).toBeLessThanOrEqual(b.depth);
      }
    },
  );

  it('reruns the default scenario to a byte-identical summary', async () => {
    const scenario = await loadScenario(join(DIR, 'default.yaml'));
    const a = await runScenario(scenario, { sink: new MemorySink(false) });
    const b = await runScenario(scenario, { sink: new MemorySink(false) });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.goodput_share).toBeGreaterThan(0.9);
  });
});
