/**
 * The driver over real loopback sockets: open-loop timing and latency from scheduled send times
 * (no coordinated omission), retries honouring Retry-After plus the jitter hint, deadline aborts,
 * SSE TTFT and inter-token latency, API keys, HTTP/2 for the h2 share.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Backend, startBackend } from './test/backend.js';
import { run, setupOf } from './test/helpers.js';

let backend: Backend | undefined;
afterEach(async () => {
  await backend?.close();
  backend = undefined;
});

const reqId = (h: Record<string, string | string[] | undefined>): number => Number(h['x-request-id']);

describe('open loop', () => {
  it('keeps sending on schedule while the target stalls, and counts the stall in latency', async () => {
    // The target holds every request that arrives in a 500 ms window until the window closes.
    let freeze: { from: number; to: number } | undefined;
    backend = await startBackend({
      hook: (s, n) => {
        if (n === 1) freeze = { from: s.atMs + 300, to: s.atMs + 800 };
        if (freeze && s.atMs >= freeze.from && s.atMs < freeze.to) return { delayMs: freeze.to - s.atMs };
        return undefined;
      },
    });
    const r = await run(
      backend.url,
      setupOf({ arrival: { kind: 'constant', ratePerSec: 50, durationMs: 1500 } }),
      1600,
      { graceMs: 1000 },
    );
    expect(r.schedule.sends).toBe(75);
    // Sent on time; some late sends are allowed, as other test files share the 2 cores.
    expect(r.schedule.late_sends).toBeLessThanOrEqual(15);
    expect(r.schedule.lag_p50_ms).toBeLessThan(5);
    // Requests kept leaving during the stall (a closed loop would have stopped sending).
    const during = backend.seen.filter((s) => freeze && s.atMs >= freeze.from && s.atMs < freeze.to);
    expect(during.length).toBeGreaterThanOrEqual(22);
    const e2e = new Map(r.sink.requests.map((q) => [q.id, q.e2e_ms]));
    for (const s of during) {
      const waited = freeze!.to - s.atMs;
      expect(Number(e2e.get(reqId(s.headers)))).toBeGreaterThanOrEqual(waited - 15);
    }
    expect(r.summary.e2e_ms.max).toBeGreaterThan(450);
  });

  it('measures from the scheduled time when this process itself freezes (coordinated omission)', async () => {
    backend = await startBackend();
    const busy = setTimeout(() => {
      const until = performance.now() + 500;
      while (performance.now() < until) {
        // the event loop is frozen: nothing can be sent
      }
    }, 350);
    const r = await run(
      backend.url,
      setupOf({ arrival: { kind: 'constant', ratePerSec: 50, durationMs: 1200 } }),
      1300,
      { graceMs: 500 },
    );
    clearTimeout(busy);
    expect(r.schedule.sends).toBe(60);
    expect(r.schedule.late_sends).toBeGreaterThanOrEqual(15);
    expect(r.schedule.lag_max_ms).toBeGreaterThan(350);
    expect(r.schedule.kept_schedule).toBe(false);
    expect(r.summary.anomalies.late_sends).toBe(r.schedule.late_sends);
    // The request due first in the freeze reports about the whole freeze as latency.
    const sorted = [...r.sink.requests].sort((a, b) => a.sent_ms - b.sent_ms);
    const worst = Math.max(...sorted.map((q) => Number(q.e2e_ms)));
    expect(worst).toBeGreaterThan(350);
    // Latency was measured from the schedule: e2e >= the send lag of every request.
    const sentAt = new Map(backend.seen.map((s) => [reqId(s.headers), s.atMs]));
    const firstSeen = Math.min(...backend.seen.map((s) => s.atMs));
    const firstSent = sorted[0]!.sent_ms;
    for (const q of sorted) {
      const lagged = sentAt.get(q.id)! - firstSeen - (q.sent_ms - firstSent);
      expect(Number(q.e2e_ms)).toBeGreaterThanOrEqual(lagged - 5);
    }
  });
});

describe('retries, deadlines, streams', () => {
  it('waits Retry-After plus a jitter within the hint before the next attempt', async () => {
    const tries = new Map<string, number>();
    backend = await startBackend({
      hook: (s) => {
        const n = (tries.get(s.path) ?? 0) + 1;
        tries.set(s.path, n);
        if (n <= 3)
          return {
            status: 429,
            headers: { 'retry-after': '1' },
            body: JSON.stringify({ error: 'admission_capacity', retry_after: 1, jitter_hint_ms: 500 }),
          };
        return undefined;
      },
    });
    const r = await run(
      backend.url,
      setupOf({
        arrival: { kind: 'constant', ratePerSec: 20, durationMs: 150 },
        retry: { kind: 'honour', maxRetries: 2 },
      }),
      2200,
    );
    expect(r.summary.attempts).toBe(6);
    const recs = r.sink.requests;
    const first = recs.filter((q) => q.attempt === 1);
    const second = recs.filter((q) => q.attempt === 2);
    expect(first.map((q) => [q.outcome, q.status, q.error, q.decision])).toEqual(
      Array(3).fill(['shed', 429, 'admission_capacity', 'refuse']),
    );
    expect(second.every((q) => q.outcome === 'completed')).toBe(true);
    const gaps: number[] = [];
    for (const q of second) {
      const prev = first.find((f) => f.logical_id === q.logical_id)!;
      const seenPrev = backend.seen.find((s) => reqId(s.headers) === prev.id)!;
      const seenNext = backend.seen.find((s) => reqId(s.headers) === q.id)!;
      gaps.push(seenNext.atMs - seenPrev.atMs);
    }
    for (const g of gaps) {
      expect(g).toBeGreaterThanOrEqual(1000);
      expect(g).toBeLessThanOrEqual(1540);
    }
    expect(new Set(gaps.map((g) => Math.round(g / 5))).size).toBeGreaterThan(1);
    expect(r.summary.sheds).toEqual({ '429 admission_capacity': 3 });
    expect(r.summary.retry_amplification).toBe(2);
  });

  it('aborts a request at its deadline', async () => {
    backend = await startBackend({ hook: () => ({ delayMs: 3000 }) });
    const r = await run(
      backend.url,
      setupOf({ arrival: { kind: 'constant', ratePerSec: 1, durationMs: 500 }, deadlineMs: 300 }),
      800,
    );
    const [q] = r.sink.requests;
    expect(q).toMatchObject({ outcome: 'cancelled', status: 0, good: false, e2e_ms: '' });
    const s = backend.seen[0]!;
    expect(s.closedAtMs! - s.atMs).toBeGreaterThan(250);
    expect(s.closedAtMs! - s.atMs).toBeLessThan(600);
  });

  it('measures TTFT and inter-token latency from the SSE stream', async () => {
    backend = await startBackend({ ttftMs: 120, itlMs: 30 });
    const r = await run(
      backend.url,
      setupOf({ arrival: { kind: 'constant', ratePerSec: 2, durationMs: 1000 }, output: 5, ttftSloMs: 1000 }),
      1500,
      { graceMs: 500 },
    );
    expect(r.sink.requests).toHaveLength(2);
    for (const q of r.sink.requests) {
      expect(q.outcome).toBe('completed');
      expect(q.generated_tokens).toBe(5);
      expect(Number(q.ttft_ms)).toBeGreaterThanOrEqual(115);
      expect(Number(q.ttft_ms)).toBeLessThan(250);
      expect(Number(q.e2e_ms)).toBeGreaterThanOrEqual(230);
      expect(q.good).toBe(true);
      // TPOT from the record's own times; the emulator spaces tokens 30 ms apart.
      expect(q.tpot_ms).toBe(Math.round(((Number(q.e2e_ms) - Number(q.ttft_ms)) / 4) * 1000) / 1000);
      expect(Number(q.tpot_ms)).toBeGreaterThanOrEqual(25);
      expect(Number(q.tpot_ms)).toBeLessThan(80);
    }
    // The summary's ITL counts the driver's gaps (no warm-up here): four per five-token stream.
    const itl = r.summary.itl_ms!;
    expect(itl.count).toBe(r.itl_ms.count);
    expect(itl.max).toBe(r.itl_ms.max);
    expect(itl.p50).toBeGreaterThanOrEqual(25);
    expect(itl.p50).toBeLessThan(80);
    expect(r.summary.tpot_ms.count).toBe(2);
    expect(r.itl_ms.count).toBe(8);
    expect(r.itl_ms.p50).toBeGreaterThanOrEqual(25);
    expect(r.itl_ms.p50).toBeLessThan(80);
    expect(r.summary.max_inflight).toBe(3);
  });

  it('marks a completion past its TTFT objective as not good', async () => {
    backend = await startBackend({ ttftMs: 150 });
    const r = await run(
      backend.url,
      setupOf({ arrival: { kind: 'constant', ratePerSec: 1, durationMs: 500 }, ttftSloMs: 50 }),
      900,
    );
    expect(r.sink.requests[0]).toMatchObject({ outcome: 'completed', good: false });
    expect(r.summary.good).toBe(0);
  });
});

describe('tenants and protocols', () => {
  it("sends each tenant's API key and the h2 share over HTTP/2", async () => {
    backend = await startBackend();
    const r = await run(
      backend.url,
      setupOf({
        arrival: { kind: 'poisson', ratePerSec: 60, durationMs: 800 },
        tenants: [{ id: 'a', weight: 1 }, { id: 'b', weight: 1 }, { weight: 1 }],
        apiKeys: { a: 'sk-a', b: 'sk-b' },
        h2: 0.5,
        stream: 0.5,
      }),
      1000,
      { graceMs: 500 },
    );
    const recs = new Map(r.sink.requests.map((q) => [q.id, q]));
    expect(backend.seen.length).toBeGreaterThan(20);
    const keys = { a: 'Bearer sk-a', b: 'Bearer sk-b', keyless: undefined } as Record<
      string,
      string | undefined
    >;
    const versions = new Set<string>();
    for (const s of backend.seen) {
      const q = recs.get(reqId(s.headers))!;
      expect(s.headers.authorization).toBe(keys[q.tenant]);
      expect(s.httpVersion).toBe(q.protocol === 'h2' ? '2.0' : '1.1');
      versions.add(s.httpVersion);
      expect(s.body?.max_tokens).toBe(q.output_tokens);
      expect(s.body?.stream).toBe(q.stream);
    }
    expect(versions).toEqual(new Set(['1.1', '2.0']));
    expect(r.protocols.h2).toBeGreaterThan(0);
    expect(r.summary.outcomes.completed).toBe(r.summary.attempts);
    expect(r.summary.tenants.map((t) => t.tenant)).toEqual(['a', 'b', 'keyless']);
  });
});
