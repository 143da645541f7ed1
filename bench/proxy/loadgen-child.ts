/**
 * Child process: the Node load generator (its own event loop, away from the
 * proxy's). Closed-loop workers on raw keep-alive HTTP/1.1 connections:
 * SSE streams (TTFT = send to first `data:` byte, e2e = send to the last
 * byte, events = `\n\n`-terminated events), or short requests (requests/s,
 * used when wrk is not installed). It also parks requests for the memory
 * phase: one connection per request, the request sent, no answer expected.
 */
import { performance } from 'node:perf_hooks';
import { Http1Conn, postRequest, type ResponseHandler } from './http1.js';
import { serve } from './ipc.js';

export interface Workload {
  port: number;
  path: string;
  body: string;
  /** Workers (each one connection, one request at a time). */
  concurrency: number;
  /** Workers start spread uniformly over this many ms (no lock-step). */
  staggerMs: number;
  /** Requests sent before this many ms are not recorded. */
  warmupMs: number;
  /** Recording window after the warm-up, ms; no request is sent after it. */
  measureMs: number;
  /** Uniform random pause between a worker's requests, ms (0 = none). */
  thinkMs: number;
}

export interface LoopResult {
  /** Per recorded request, ms. */
  ttft: Float64Array;
  e2e: Float64Array;
  /** Requests sent in the window that completed with 200. */
  completed: number;
  /** SSE events and 200 responses that arrived inside the window. */
  eventsInWindow: number;
  completedInWindow: number;
  windowS: number;
  statuses: Record<string, number>;
  failures: number;
  connects: number;
  /** Workers whose last request had not ended 15 s after the window. */
  unfinished: number;
}

const HOST = '127.0.0.1';
const NL = 10;

function closedLoop(w: Workload): Promise<LoopResult> {
  const req = postRequest(HOST, w.port, w.path, w.body);
  const t0 = performance.now();
  const winStart = t0 + w.warmupMs;
  const winEnd = winStart + w.measureMs;
  const ttft: number[] = [];
  const e2e: number[] = [];
  const statuses: Record<string, number> = {};
  let completed = 0;
  let eventsInWindow = 0;
  let completedInWindow = 0;
  let failures = 0;
  let connects = 0;
  let live = w.concurrency;
  const conns: Http1Conn[] = [];

  return new Promise<LoopResult>((resolve) => {
    let over = false;
    const finishAll = () => {
      if (over) return;
      over = true;
      clearTimeout(deadline);
      for (const c of conns) c.destroy();
      resolve({
        ttft: Float64Array.from(ttft),
        e2e: Float64Array.from(e2e),
        completed,
        eventsInWindow,
        completedInWindow,
        windowS: w.measureMs / 1000,
        statuses,
        failures,
        connects,
        unfinished: live,
      });
    };
    // Requests still open this long after the window are abandoned (counted).
    const deadline = setTimeout(finishAll, w.warmupMs + w.measureMs + 15_000);
    const finishWorker = () => {
      live--;
      if (live === 0) finishAll();
    };

    const worker = (slot: number) => {
      let conn: Http1Conn | null = null;
      const next = () => {
        const now = performance.now();
        if (over) return;
        if (now >= winEnd) {
          finishWorker();
          return;
        }
        if (!conn?.reusable) {
          conn?.destroy();
          const c = new Http1Conn(HOST, w.port);
          connects++;
          conns[slot] = c;
          conn = c;
          c.connected.then(send, () => {
            failures++;
            setTimeout(next, 10);
          });
          return;
        }
        send();
      };
      const send = () => {
        const c = conn!;
        const sentAt = performance.now();
        const recorded = sentAt >= winStart && sentAt < winEnd;
        let first = -1;
        let lastNl = false;
        const h: ResponseHandler = {
          head: () => {},
          body: (b, s, e) => {
            const now = performance.now();
            if (first < 0 && b.indexOf('data:', s) >= 0 && b.indexOf('data:', s) < e) first = now;
            let n = 0;
            if (lastNl && e > s && b[s] === NL) n++;
            let i = b.indexOf('\n\n', s);
            while (i >= 0 && i + 1 < e) {
              n++;
              i = b.indexOf('\n\n', i + 2);
            }
            lastNl = e > s && b[e - 1] === NL;
            if (now >= winStart && now < winEnd) eventsInWindow += n;
          },
          done: (status) => {
            const now = performance.now();
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (status === 200) {
              if (now >= winStart && now < winEnd) completedInWindow++;
              if (recorded) {
                completed++;
                e2e.push(now - sentAt);
                ttft.push(first >= 0 ? first - sentAt : now - sentAt);
              }
            }
            if (w.thinkMs > 0) setTimeout(next, Math.random() * w.thinkMs);
            else next();
          },
          fail: () => {
            failures++;
            setTimeout(next, 1);
          },
        };
        c.send(req, h);
      };
      setTimeout(next, w.concurrency > 1 ? (slot / w.concurrency) * w.staggerMs : 0);
    };
    for (let i = 0; i < w.concurrency; i++) worker(i);
  });
}

/** Parked connections: one request each, left waiting for an answer. */
const parked: Http1Conn[] = [];
const parkedStatuses: Record<string, number> = {};

async function park(a: { port: number; path: string; body: string; n: number }): Promise<number> {
  const req = postRequest(HOST, a.port, a.path, a.body);
  const BATCH = 100;
  for (let i = 0; i < a.n; i += BATCH) {
    const batch: Http1Conn[] = [];
    for (let j = i; j < Math.min(a.n, i + BATCH); j++) {
      const c = new Http1Conn(HOST, a.port);
      batch.push(c);
      parked.push(c);
    }
    await Promise.all(batch.map((c) => c.connected));
    for (const c of batch) {
      c.send(req, {
        head: () => {},
        body: () => {},
        done: (s) => {
          parkedStatuses[s] = (parkedStatuses[s] ?? 0) + 1;
        },
        fail: () => {
          parkedStatuses.failed = (parkedStatuses.failed ?? 0) + 1;
        },
      });
    }
  }
  return parked.length;
}

serve({
  closedLoop: (w: Workload) => closedLoop(w),
  park: (a: { port: number; path: string; body: string; n: number }) => park(a),
  parkedStatuses: () => ({ ...parkedStatuses }),
  unpark() {
    for (const c of parked) c.destroy();
    const n = parked.length;
    parked.length = 0;
    for (const k of Object.keys(parkedStatuses)) delete parkedStatuses[k];
    return n;
  },
});
