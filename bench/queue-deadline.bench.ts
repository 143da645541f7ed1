/**
 * `npm run bench:queue-deadline [-- --json]`: how exactly the proxy ends a queued request at its
 * wait window (`fc_max_queue_wait_ms` 1000 ms).
 *
 * One proxy (`LoxiProxy`, the code of `sluice proxy`) runs in this process with a ceiling of 1
 * and a queue of 64 in front of a loopback backend that holds the one admitted request for the
 * whole run. WAITERS HTTP/1.1 requests are then sent one every STAGGER_MS, so that about 40 wait
 * at once and their deadlines fall at distinct instants; each must be answered 504
 * `admission_queue_timeout`. For each the benchmark records
 *
 * - `queued_ms` from the 504 body: the gate's own measure of the wait (its timer's overshoot);
 * - the client's time from sending the request to the 504's status line (what a user sees).
 *
 * Baseline, side by side in the same process and the same stagger: bare `setTimeout(1000)`
 * timers, whose overshoot is the event loop's own jitter. The target (issue 15): p99 overshoot
 * ≤ 10 ms and every 504 between 1000 and 1020 ms, on a quiet machine. The verdict is `met`,
 * `missed` (exit 1), or `unresolved` (exit 3) when the bare timers' own p99 overshoot is already
 * over 10 ms: the machine is then too busy for the measurement to resolve the target.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { LoxiProxy } from '../proxy/proxy.js';

const WINDOW_MS = 1000;
const WAITERS = 300;
const STAGGER_MS = 23;
const TARGET_P99_MS = 10;
const TARGET_MAX_MS = 20;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

function summary(xs: number[]): { p50: number; p90: number; p99: number; max: number; min: number } {
  const r = (v: number): number => Math.round(v * 100) / 100;
  return {
    min: r(Math.min(...xs)),
    p50: r(quantile(xs, 0.5)),
    p90: r(quantile(xs, 0.9)),
    p99: r(quantile(xs, 0.99)),
    max: r(Math.max(...xs)),
  };
}

/** Sends one request; resolves with the status, the body and the ms to the status line. */
function send(port: number, body: string): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const ms = performance.now() - t0;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function bareTimers(): Promise<number[]> {
  const out: Promise<number>[] = [];
  for (let i = 0; i < WAITERS; i++) {
    out.push(
      new Promise((r) => {
        const t0 = performance.now();
        setTimeout(() => r(performance.now() - t0 - WINDOW_MS), WINDOW_MS);
      }),
    );
    await sleep(STAGGER_MS);
  }
  return Promise.all(out);
}

async function proxied(): Promise<{ gate: number[]; client: number[]; wrong: number }> {
  const held: http.ServerResponse[] = [];
  const backend = http.createServer((_q, s) => held.push(s));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const proxy = new LoxiProxy({
    adminHost: '127.0.0.1',
    adminPort: 0,
    env: {},
    warn: () => {},
    monitor: { healthIntervalMs: 0, scrapeIntervalMs: 0 },
    audit: { perSecond: 0 }, // every 504 is a sec.ai.deny line: none on stderr here
  });
  await proxy.start();
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  await proxy.apply({
    serviceArguments: {
      externalIP: '127.0.0.1',
      port,
      protocol: 'tcp',
      mode: 4,
      sse_mode: true,
      fc_mode: 'enforce',
      fc_max_outstanding: 1,
      fc_max_queue_depth: 64,
      fc_max_queue_wait_ms: WINDOW_MS,
    },
    endpoints: [{ endpointIP: '127.0.0.1', targetPort: (backend.address() as AddressInfo).port, weight: 1 }],
  });
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  const holder = send(port, body).catch(() => null); // takes the one unit for the whole run
  while (held.length === 0) await sleep(5);
  const waits: Promise<{ status: number; body: string; ms: number }>[] = [];
  for (let i = 0; i < WAITERS; i++) {
    waits.push(send(port, body));
    await sleep(STAGGER_MS);
  }
  const replies = await Promise.all(waits);
  const gate: number[] = [];
  const client: number[] = [];
  let wrong = 0;
  for (const r of replies) {
    if (r.status !== 504) {
      wrong++;
      continue;
    }
    const j = JSON.parse(r.body) as { queued_ms?: number };
    gate.push((j.queued_ms ?? Number.NaN) - WINDOW_MS);
    client.push(r.ms - WINDOW_MS);
  }
  for (const s of held) s.destroy();
  await holder;
  await proxy.close(0);
  backend.closeAllConnections();
  await new Promise<void>((r) => backend.close(() => r()));
  return { gate, client, wrong };
}

async function main(): Promise<void> {
  const json = process.argv.includes('--json');
  // Side by side: bare timers, the proxy, bare timers again; the baseline is the better of the two.
  const bare1 = await bareTimers();
  const p = await proxied();
  const bare2 = await bareTimers();
  const bare = quantile(bare1, 0.99) <= quantile(bare2, 0.99) ? bare1 : bare2;
  const result = {
    window_ms: WINDOW_MS,
    waiters: WAITERS,
    wrong_status: p.wrong,
    overshoot_ms: {
      bare_timer: summary(bare),
      gate_queued_ms: summary(p.gate),
      client_504: summary(p.client),
    },
    verdict: 'met' as 'met' | 'missed' | 'unresolved',
    why: '',
  };
  const c = result.overshoot_ms.client_504;
  const missed =
    p.wrong > 0 ||
    result.overshoot_ms.gate_queued_ms.min < 0 ||
    c.min < 0 ||
    c.p99 > TARGET_P99_MS ||
    c.max > TARGET_MAX_MS;
  if (missed && result.overshoot_ms.bare_timer.p99 > TARGET_P99_MS) {
    result.verdict = 'unresolved';
    result.why = `bare setTimeout p99 overshoot ${result.overshoot_ms.bare_timer.p99} ms is itself over ${TARGET_P99_MS} ms: the machine is too busy`;
  } else if (missed) {
    result.verdict = 'missed';
    result.why = `target: every 504 between ${WINDOW_MS} and ${WINDOW_MS + TARGET_MAX_MS} ms, p99 overshoot <= ${TARGET_P99_MS} ms, none early, all 504`;
  }
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    const row = (name: string, s: ReturnType<typeof summary>): string =>
      `${name.padEnd(22)} ${[s.min, s.p50, s.p90, s.p99, s.max].map((v) => String(v).padStart(8)).join('')}`;
    process.stdout.write(
      [
        `queue deadline: ${WAITERS} waiters, window ${WINDOW_MS} ms, overshoot in ms (answer time - window)`,
        `${''.padEnd(22)} ${['min', 'p50', 'p90', 'p99', 'max'].map((h) => h.padStart(8)).join('')}`,
        row('bare setTimeout', result.overshoot_ms.bare_timer),
        row('gate queued_ms', result.overshoot_ms.gate_queued_ms),
        row('client 504', result.overshoot_ms.client_504),
        `answers other than 504: ${p.wrong}`,
        `verdict: ${result.verdict}${result.why ? ` (${result.why})` : ''}`,
        '',
      ].join('\n'),
    );
  }
  process.exitCode = result.verdict === 'met' ? 0 : result.verdict === 'missed' ? 1 : 3;
}

await main();
