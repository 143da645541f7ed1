/**
 * `trace.spread_quantised_ms` is applied: records of a trace whose timestamps are quantised (the
 * Mooncake conversation sample, stamped in steps of seconds) are sent spread over the bucket after
 * their stamp, not in bursts at it, the same way for the same seed; without the field they are
 * sent at their stamps. (The field was once accepted and silently ignored.)
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { loadScenario } from '../scenario/load.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-trace-spread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scenario = (spread: string, seed = 1): string => `
name: spread
description: the Mooncake conversation sample, replayed
seed: ${seed}
duration_s: 60
gate:
  rule:
    serviceArguments: { externalIP: 192.0.2.10, port: 8080, protocol: tcp, mode: 4, sse_mode: true, fc_mode: "off" }
engines:
  - { profile: llama-3.1-8b-h100, count: 4 }
clients:
  trace: { file: ${JSON.stringify(join(REPO_ROOT, 'data', 'mooncake-conversation-sample.jsonl'))}, format: mooncake, limit: 200${spread} }
`;

async function sendTimes(text: string, name: string): Promise<number[]> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  const sink = new MemorySink(true);
  await runScenario(await loadScenario(file), { sink });
  return sink.requests.filter((r) => r.attempt === 1).map((r) => r.sent_ms);
}

describe('trace.spread_quantised_ms', () => {
  it('spreads records sharing a stamp over the bucket after it, reproducibly per seed', async () => {
    const plain = await sendTimes(scenario(''), 'plain');
    const spread = await sendTimes(scenario(', spread_quantised_ms: 1000'), 'spread');
    const again = await sendTimes(scenario(', spread_quantised_ms: 1000'), 'again');
    const other = await sendTimes(scenario(', spread_quantised_ms: 1000', 2), 'other');
    expect(plain.length).toBeGreaterThan(50);
    expect(spread).toHaveLength(plain.length);
    // Without spreading many records share a send time; with it nearly none do.
    const distinct = (xs: number[]) => new Set(xs).size;
    expect(distinct(plain)).toBeLessThan(plain.length / 2);
    expect(distinct(spread)).toBeGreaterThan(0.95 * spread.length);
    // Each spread record stays within the bucket after its own stamp.
    const byOrder = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const p = byOrder(plain);
    const s = byOrder(spread);
    for (let i = 0; i < p.length; i++) {
      expect(s[i]!).toBeGreaterThanOrEqual(p[i]!);
      expect(s[i]!).toBeLessThan(p[i]! + 1000);
    }
    expect(again).toEqual(spread);
    expect(other).not.toEqual(spread);
  }, 60_000);
});

describe('the trace file', () => {
  it.runIf(existsSync('/proc/self/fd'))(
    'is closed when the run stops reading before its end (a limit), not left to the garbage collector',
    async () => {
      // Open file descriptors of this process (Linux); a handle left to the collector stays open.
      const handles = () => readdirSync('/proc/self/fd').length;
      const before = handles();
      const file = join(dir, 'limited.yaml');
      writeFileSync(file, scenario('').replace('limit: 200', 'limit: 5'));
      await runScenario(await loadScenario(file), { sink: new MemorySink(false) });
      expect(handles()).toBe(before);
    },
    60_000,
  );
});
