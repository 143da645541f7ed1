import type { ClientRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from './emulator.js';
import { chat, http, metric, parseProm, postJson, streamSse, waitFor } from './test/helpers.js';

// Timing assertions use wide bounds: the machine is shared and noisy. They check ordering
// and that nothing arrives early, not tight latencies.

const running: RunningEmulator[] = [];
async function start(o: EmulatorOptions): Promise<RunningEmulator> {
  const e = await startEmulator(o);
  running.push(e);
  return e;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

const stream = (n: number) => chat(n, { stream: true });

async function scrape(e: RunningEmulator): Promise<Map<string, number>> {
  return parseProm((await http(e.url, 'GET', '/metrics')).text);
}

describe('fixed profile timings', () => {
  it('delivers the first token after ttft and then one every itl', async () => {
    const e = await start({ profile: 'fixed', fixed: { ttftMs: 100, itlMs: 20 } });
    const r = await streamSse(e.url, '/v1/chat/completions', stream(6));
    const tokens = r.events.slice(1, 7).map((x) => x.atMs); // [0] is the role chunk, sent with token 1
    expect(r.events[0]?.atMs).toBeGreaterThanOrEqual(95);
    expect(r.events[0]?.atMs).toBeLessThan(400);
    const gaps = tokens.slice(1).map((t, i) => t - (tokens[i] as number));
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThanOrEqual(15);
    expect(mean).toBeLessThan(60);
    // Nothing early: the sixth token is due 100 ms + 5 × 20 ms after the request was sent. (A gap
    // between two arrivals is no such check: a first token delivered late on a busy machine
    // shortens it.)
    expect(tokens.at(-1) as number).toBeGreaterThanOrEqual(195);
  });

  it('queues FIFO beyond the concurrency cap, and /metrics shows running and waiting', async () => {
    const e = await start({ profile: 'fixed', fixed: { ttftMs: 150, itlMs: 10 }, maxNumSeqs: 2 });
    const all = [0, 1, 2].map(() => streamSse(e.url, '/v1/chat/completions', stream(2)));
    await waitFor(() => e.stats().running === 2 && e.stats().waiting === 1);
    const m = await scrape(e);
    expect(metric(m, 'vllm:num_requests_running')).toBe(2);
    expect(metric(m, 'vllm:num_requests_waiting')).toBe(1);
    const ttfts = (await Promise.all(all)).map((r) => r.events[0]?.atMs ?? Number.NaN).sort((a, b) => a - b);
    expect(ttfts[2] as number).toBeGreaterThanOrEqual(300); // waited for a slot: 150 + 10, then 150
    expect((ttfts[2] as number) - (ttfts[1] as number)).toBeGreaterThan(100);
    const after = await scrape(e);
    expect(metric(after, 'vllm:num_requests_running')).toBe(0);
    expect(
      after.get('vllm:request_success_total{model_name="sluice/fixed",engine="0",finished_reason="length"}'),
    ).toBe(3);
  });

  it('runs the engine clock faster with --time-scale', async () => {
    const e = await start({ profile: 'fixed', fixed: { ttftMs: 400, itlMs: 40 }, timeScale: 4 });
    const r = await streamSse(e.url, '/v1/chat/completions', stream(3));
    // Engine time 400 + 2·40 = 480 ms; at 4× that is 120 real ms.
    expect(r.events[0]?.atMs).toBeGreaterThanOrEqual(90);
    expect(r.totalMs).toBeLessThan(400);
    // The engine's own TTFT histogram is in engine seconds.
    const sum = metric(await scrape(e), 'vllm:time_to_first_token_seconds_sum') as number;
    expect(sum).toBeGreaterThanOrEqual(0.39);
  });
});

describe('the vLLM engine model on the real clock', () => {
  it('batches: 8 concurrent requests finish much sooner than 8 sequential ones', async () => {
    const e = await start({ profile: 'llama-3.1-8b-h100', timeScale: 5 });
    const body = chat(40);
    const t0 = performance.now();
    for (let i = 0; i < 8; i++)
      expect((await postJson(e.url, '/v1/chat/completions', body)).status).toBe(200);
    const sequential = performance.now() - t0;
    const t1 = performance.now();
    const rs = await Promise.all(
      Array.from({ length: 8 }, () => postJson(e.url, '/v1/chat/completions', body)),
    );
    const concurrent = performance.now() - t1;
    expect(rs.every((r) => r.status === 200 && r.json.usage.completion_tokens === 40)).toBe(true);
    expect(concurrent).toBeLessThan(sequential / 3);
    const m = await scrape(e);
    expect(metric(m, 'vllm:generation_tokens_total')).toBe(640);
  });

  it('exposes the metric names of the chosen vLLM version', async () => {
    const old = await start({ profile: 'fixed', metricsVersion: 'v0.9.1' });
    const text = (await http(old.url, 'GET', '/metrics')).text;
    expect(text).toContain('vllm:gpu_cache_usage_perc');
    expect(text).not.toContain('vllm:kv_cache_usage_perc');
    const latest = await start({ profile: 'fixed' });
    const r = await http(latest.url, 'GET', '/metrics');
    expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(r.text).toContain('vllm:kv_cache_usage_perc');
  });
});

describe('client disconnects', () => {
  it('aborts the engine request of a stream the client closes', async () => {
    const e = await start({ profile: 'fixed', fixed: { ttftMs: 10, itlMs: 20 } });
    const r = await streamSse(e.url, '/v1/chat/completions', stream(200), (ev, req) => {
      if (ev.data.includes('"content":" quick"')) req.destroy();
    });
    expect(r.events.length).toBeLessThan(10);
    await waitFor(() => e.stats().running === 0 && e.stats().active === 0);
    expect(e.stats().disconnected).toBe(1);
    const m = await scrape(e);
    expect(
      m.get('vllm:request_success_total{model_name="sluice/fixed",engine="0",finished_reason="abort"}'),
    ).toBe(1);
    expect(metric(m, 'vllm:num_requests_running')).toBe(0);
  });

  it('drops a queued request whose client goes away', async () => {
    const e = await start({ profile: 'fixed', fixed: { ttftMs: 20, itlMs: 20 }, maxNumSeqs: 1 });
    const first = streamSse(e.url, '/v1/chat/completions', stream(10));
    await waitFor(() => e.stats().running === 1);
    let queued: ClientRequest | undefined;
    const second = streamSse(e.url, '/v1/chat/completions', stream(10), undefined, (req) => {
      queued = req;
    });
    await waitFor(() => e.stats().waiting === 1);
    queued?.destroy();
    await waitFor(() => e.stats().waiting === 0 && e.stats().disconnected === 1);
    expect((await second).events).toHaveLength(0);
    expect((await first).events.at(-1)?.data).toBe('[DONE]');
    await waitFor(() => e.stats().running === 0 && e.stats().active === 0);
    expect(e.stats().completed).toBe(1);
  });
});
