import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDecisionLogLine } from './decision-log.js';
import { TraceFormatError } from './errors.js';
import { readDecisionLog } from './trace-files.js';
import type { TraceRecord } from './trace-parse.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-dlog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function line(o: Partial<Record<string, unknown>>): string {
  return JSON.stringify({
    time: '2026-11-30T12:00:00.000Z',
    service: '192.0.2.10:8080',
    tenant: null,
    decision: 'admit',
    reason: 'admitted',
    outcome: 'completed',
    status: 200,
    error: null,
    method: 'POST',
    path: '/v1/chat/completions',
    protocol: 'http1',
    endpoint: '198.51.100.11:8000',
    queued_ms: null,
    ttft_ms: 120,
    duration_ms: 2000,
    prompt_tokens: 300,
    output_tokens: 50,
    ...o,
  });
}

async function all(it: AsyncIterable<TraceRecord>): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const r of it) out.push(r);
  return out;
}

describe('the decision log as a trace', () => {
  it('replays lines written in end order in arrival order, with recorded timings', async () => {
    const f = join(dir, 'log.jsonl');
    writeFileSync(
      f,
      [
        line({ time: '2026-11-30T12:00:01.000Z', duration_ms: 500, tenant: 'b' }), // ends 1.5 s
        line({ time: '2026-11-30T12:00:00.000Z', duration_ms: 3000, queued_ms: 400, tenant: 'a' }), // ends 3.0 s
        line({
          time: '2026-11-30T12:00:02.000Z',
          decision: 'refuse',
          outcome: 'shed',
          status: 429,
          duration_ms: 1,
        }),
        line({ time: '2026-11-30T12:00:02.500Z', decision: 'unauthorized', duration_ms: 1 }),
        line({
          time: '2026-11-30T12:00:02.600Z',
          reason: 'bypass_non_inference',
          decision: 'bypass',
          duration_ms: 1,
        }),
      ].join('\n'),
    );
    const recs = await all(readDecisionLog(f));
    expect(recs.map((r) => [r.atMs, r.tenant, r.recorded, r.inference])).toEqual([
      [0, 'a', { serviceMs: 2600, ttftMs: 120 }, true],
      [1000, 'b', { serviceMs: 500, ttftMs: 120 }, true],
      [2000, undefined, undefined, true],
      [2600, undefined, { serviceMs: 1, ttftMs: 120 }, false],
    ]);
  });

  it('names the file, line and field of a bad line, or skips and counts it on request', async () => {
    expect(() => parseDecisionLogLine('{"time":"soon"}', { file: 'x.jsonl', line: 7 })).toThrow(
      TraceFormatError,
    );
    try {
      parseDecisionLogLine('{"time":"soon"}', { file: 'x.jsonl', line: 7 });
    } catch (e) {
      expect((e as Error).message).toMatch(/^x\.jsonl:7: time/);
    }
    const f = join(dir, 'bad.jsonl');
    writeFileSync(f, [line({}), 'not json', line({ time: '2026-11-30T12:00:01.000Z' })].join('\n'));
    await expect(all(readDecisionLog(f))).rejects.toThrow(/bad\.jsonl:2: line/);
    const bad: number[] = [];
    const recs = await all(readDecisionLog(f, { skipBadLines: true, onBadLine: (e) => bad.push(e.line) }));
    expect(recs).toHaveLength(2);
    expect(bad).toEqual([2]);
  });
});
