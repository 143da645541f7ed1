import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ceilingChart } from '../reports/charts/ceiling.js';
import { parseTimeseriesCsv } from '../reports/timeseries.js';
import { runObserve } from './observe.js';
import { MAX_REPLAY_S } from './scenario.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-observe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RULE = {
  serviceArguments: {
    externalIP: '192.0.2.10',
    port: 8080,
    protocol: 'tcp',
    mode: 4,
    sse_mode: true,
    fc_mode: 'enforce',
    fc_max_outstanding: 4,
    fc_max_queue_depth: 0,
  },
  endpoints: [{ endpointIP: '198.51.100.11', targetPort: 8000 }],
};

/** A decision log of `n` requests arriving every `gapMs`, each running `serviceMs`, written in end order. */
function decisionLog(file: string, n: number, gapMs: number, serviceMs: number): void {
  const lines = Array.from({ length: n }, (_, i) => {
    const at = Date.UTC(2026, 10, 30, 12) + i * gapMs;
    return {
      end: at + serviceMs,
      text: JSON.stringify({
        time: new Date(at).toISOString(),
        service: '192.0.2.10:8080',
        tenant: i % 2 ? 'a' : 'b',
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
        ttft_ms: 50,
        duration_ms: serviceMs,
        prompt_tokens: 100,
        output_tokens: 20,
      }),
    };
  });
  lines.sort((x, y) => x.end - y.end);
  writeFileSync(file, `${lines.map((l) => l.text).join('\n')}\n`);
}

const base = {
  rule: RULE,
  format: 'jsonl' as const,
  speedup: 1,
  profile: 'llama-3.1-8b-h100',
  ttftSloMs: 2000,
  maxDurationS: MAX_REPLAY_S,
  shedShares: [0.1],
  skipBadLines: false,
};

describe('sluice observe', () => {
  it('replays a decision log with its recorded timings: in flight, would-be sheds and the ceiling that sheds nothing', async () => {
    // One request every 100 ms running 950 ms: 10 in flight at the steady state, 4 allowed.
    const file = join(dir, 'log.jsonl');
    decisionLog(file, 100, 100, 950);
    const r = await runObserve({ ...base, trace: file });
    expect(r.trace.requests).toBe(100);
    expect(r.peak_inflight).toBe(10);
    expect(r.ceilings[0]).toEqual({ shed_share: 0, max_outstanding: 10 });
    expect(r.per_ceiling.service.shed).toBe(r.would_shed);
    expect(r.would_shed).toBeGreaterThan(50);
    expect(r.compare.observe.shed_rate).toBe(0);
    expect(r.compare.enforce.max_inflight).toBe(4);
    expect(r.compare.enforce.shed_rate).toBeGreaterThan(0.5);
    expect(r.tenants.map((t) => t.tenant).sort()).toEqual(['a', 'b']);
  });

  it("draws the pool's peak in flight in the report's chart, the same figure the observe summary gives", async () => {
    // Requests every 130 ms running 910 ms: 7 in flight for most of each gap, 8 for a moment.
    const file = join(dir, 'peaks.jsonl');
    decisionLog(file, 60, 130, 910);
    const out = join(dir, 'peaks');
    const r = await runObserve({ ...base, trace: file, outDir: out });
    const rows = parseTimeseriesCsv(readFileSync(join(out, 'observe', 'timeseries.csv'), 'utf8'));
    const spec = ceilingChart(rows) as unknown as {
      vconcat: { data: { values: { series: string; value: number }[] } }[];
    };
    const drawn =
      spec.vconcat[0]?.data.values.filter((v) => v.series === 'in flight').map((v) => v.value) ?? [];
    expect(Math.max(...drawn)).toBe(r.peak_inflight);
    expect(Math.max(...rows.map((x) => x.inflight))).toBeLessThan(r.peak_inflight);
  });

  it('writes observe.json-ready output for both runs into an out directory', async () => {
    const file = join(dir, 'log2.jsonl');
    decisionLog(file, 20, 200, 300);
    const out = join(dir, 'out');
    const r = await runObserve({ ...base, trace: file, outDir: out });
    expect(readFileSync(join(out, 'observe', 'summary.json'), 'utf8')).toContain(
      '"scenario": "observe-observe"',
    );
    expect(readFileSync(join(out, 'enforce', 'summary.json'), 'utf8')).toContain(
      '"scenario": "observe-enforce"',
    );
    expect(r.trace.requests).toBe(20);
  });

  it('counts and skips unreadable lines with --skip-bad-lines, and fails on them without it', async () => {
    const file = join(dir, 'bad.jsonl');
    decisionLog(file, 10, 100, 100);
    writeFileSync(file, `${readFileSync(file, 'utf8')}not json\n`);
    await expect(runObserve({ ...base, trace: file })).rejects.toThrow(/bad\.jsonl:11: line/);
    const r = await runObserve({ ...base, trace: file, skipBadLines: true });
    expect([r.trace.requests, r.trace.bad_lines]).toEqual([10, 1]);
  });

  it('refuses an empty trace', async () => {
    const file = join(dir, 'empty.csv');
    writeFileSync(file, 'TIMESTAMP,ContextTokens,GeneratedTokens\n');
    await expect(runObserve({ ...base, format: 'azure', trace: file })).rejects.toThrow(
      /has no inference request/,
    );
  });
});
