/**
 * The simulator against queueing theory: M/M/c with the gate off (Erlang C),
 * M/M/c/K with the gate as the only queue, Little's law, conservation, and
 * byte-identical reruns.
 */
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from '../scenario/load.js';
import type { RequestRecord, RunSummary, SecondRow } from './records.js';
import { runScenario } from './run.js';
import { MemorySink, type RunSink } from './sinks.js';

/** Keeps the per-second rows and a few sums over the records. */
class CountingSink implements RunSink {
  readonly seconds: SecondRow[] = [];
  e2eSum = 0;
  completed = 0;
  request(r: RequestRecord): void {
    if (r.outcome === 'completed' && r.e2e_ms !== '' && r.sent_ms >= 1000 * this.warmupS) {
      this.e2eSum += r.e2e_ms;
      this.completed++;
    }
  }
  second(row: SecondRow): void {
    this.seconds.push(row);
  }
  async flush(): Promise<void> {}
  async close(_s: RunSummary): Promise<void> {}
  constructor(readonly warmupS: number) {}
}

function exponentialScenario(o: { rate: number; gate: string; durationS: number }): string {
  return `
name: theory
duration_s: ${o.durationS}
warmup_s: 200
gate:
  rule:
    serviceArguments:
      externalIP: 192.0.2.10
      port: 8080
      protocol: tcp
      mode: 4
      sse_mode: true
${o.gate}
engines:
  - profile: exponential
    count: 1
    max_num_seqs: 8
    mean_service_ms: 1000
    api_overhead_ms: 0
clients:
  arrival: { kind: poisson, rate_per_sec: ${o.rate} }
  stream_share: 0
  retry: { kind: none }
`;
}

/** Erlang C: probability that an arrival waits in M/M/c with offered load a = λ/μ. */
function erlangC(c: number, a: number): number {
  let term = 1;
  let sum = 1;
  for (let k = 1; k < c; k++) {
    term *= a / k;
    sum += term;
  }
  const last = (term * a) / c;
  const rho = a / c;
  const top = last / (1 - rho);
  return top / (sum + top);
}

/** M/M/c/K blocking probability. */
function mmckBlocking(c: number, K: number, a: number): number {
  const p: number[] = [1];
  for (let n = 1; n <= K; n++) p.push(n <= c ? (p[n - 1]! * a) / n : (p[n - 1]! * a) / c);
  const total = p.reduce((x, y) => x + y, 0);
  return p[K]! / total;
}

/**
 * An independent reference for M/M/c/K with a deterministic wait window: Poisson arrivals,
 * c exponential servers, a FIFO waiting room of `room`, and a waiter that has not started
 * `windowS` after it arrived leaves (its place free at that instant). Shares no code with the
 * gate or the simulator. Because every waiter has the same window and the room is FIFO, the
 * waiters due to leave are always at the head, so they are dropped before each event.
 * @returns the shares of arrivals after `warmupS` that were refused and that timed out
 */
function mmckDeadlineReference(o: {
  lambda: number;
  mu: number;
  c: number;
  room: number;
  windowS: number;
  durationS: number;
  warmupS: number;
  seed: string;
}): { refused: number; timedOut: number } {
  const rand = seedrandom(o.seed);
  const exp = (rate: number): number => -Math.log(1 - rand()) / rate;
  const completions: number[] = []; // finish times of busy servers
  const room: number[] = []; // arrival times of waiters, oldest first
  const counted = (t: number): boolean => t >= o.warmupS;
  let arrivals = 0;
  let refused = 0;
  let timedOut = 0;
  const expireBefore = (t: number): void => {
    while (room.length > 0 && room[0]! + o.windowS <= t) {
      if (counted(room.shift()!)) timedOut++;
    }
  };
  let nextArrival = exp(o.lambda);
  for (;;) {
    const nextDone = completions.length > 0 ? Math.min(...completions) : Number.POSITIVE_INFINITY;
    const t = Math.min(nextArrival, nextDone);
    if (t > o.durationS) break;
    expireBefore(t);
    if (t === nextDone) {
      completions.splice(completions.indexOf(nextDone), 1);
      if (room.length > 0) {
        room.shift();
        completions.push(t + exp(o.mu));
      }
    } else {
      if (counted(t)) arrivals++;
      if (completions.length < o.c && room.length === 0) completions.push(t + exp(o.mu));
      else if (room.length < o.room) room.push(t);
      else if (counted(t)) refused++;
      nextArrival = t + exp(o.lambda);
    }
  }
  return { refused: refused / arrivals, timedOut: timedOut / arrivals };
}

describe('simulator correctness', () => {
  it('matches the M/M/c mean wait and probability of waiting (Erlang C) within 3% with the gate off', async () => {
    const text = exponentialScenario({ rate: 6.4, gate: '      fc_mode: "off"', durationS: 40_000 });
    const sc = parseScenarioText(text, 'mmc.yaml');
    const sink = new CountingSink(200);
    await runScenario(sc, { sink });
    const c = 8;
    const a = 6.4;
    const pWait = erlangC(c, a);
    const wq = pWait / (c * 1 - a); // seconds, μ = 1/s
    const meanE2eS = sink.e2eSum / sink.completed / 1000;
    const measuredWq = meanE2eS - 1;
    expect(Math.abs(measuredWq - wq) / wq).toBeLessThan(0.03);
    const rows = sink.seconds.filter((r) => r.t_s > 200);
    const busy = rows.filter((r) => r.endpoints[0]!.running === c).length / rows.length;
    expect(Math.abs(busy - pWait) / pWait).toBeLessThan(0.03);
  });

  it('matches the M/M/c/K blocking probability within 3% with the gate as the only queue', async () => {
    const gate = [
      '      fc_mode: enforce',
      '      fc_max_outstanding: 8',
      '      fc_max_queue_depth: 8',
      '      fc_max_queue_wait_ms: 3600000',
    ].join('\n');
    const sc = parseScenarioText(exponentialScenario({ rate: 8, gate, durationS: 30_000 }), 'mmck.yaml');
    const sink = new MemorySink(false);
    const s = await runScenario(sc, { sink });
    const expected = mmckBlocking(8, 16, 8);
    const blocked = (s.outcomes.shed ?? 0) / s.attempts;
    expect(Math.abs(blocked - expected) / expected).toBeLessThan(0.03);
    expect(s.max_inflight).toBe(8);
    expect(s.max_queued).toBe(8);
  });

  it('matches an independent M/M/c/K reference with a binding wait window within 3% on refusals and timeouts', async () => {
    const gate = [
      '      fc_mode: enforce',
      '      fc_max_outstanding: 8',
      '      fc_max_queue_depth: 8',
      '      fc_max_queue_wait_ms: 500',
    ].join('\n');
    const durationS = 30_000;
    const sc = parseScenarioText(exponentialScenario({ rate: 12, gate, durationS }), 'mmck-deadline.yaml');
    const s = await runScenario(sc, { sink: new MemorySink(false) });
    const ref = mmckDeadlineReference({
      lambda: 12,
      mu: 1,
      c: 8,
      room: 8,
      windowS: 0.5,
      durationS,
      warmupS: 200,
      seed: 'mmck-deadline-reference',
    });
    const refused = (s.outcomes.shed ?? 0) / s.attempts;
    const timedOut = (s.outcomes.timed_out ?? 0) / s.attempts;
    // Both are a sizeable share at this load, so 3% is a resolvable bound (each count is in the tens of thousands).
    expect(ref.refused).toBeGreaterThan(0.05);
    expect(ref.timedOut).toBeGreaterThan(0.05);
    expect(Math.abs(refused - ref.refused) / ref.refused).toBeLessThan(0.03);
    expect(Math.abs(timedOut - ref.timedOut) / ref.timedOut).toBeLessThan(0.03);
  });

  it("holds Little's law: time-average in system = throughput × mean time in system", async () => {
    const gate = [
      '      fc_mode: enforce',
      '      fc_max_outstanding: 6',
      '      fc_max_queue_depth: 20',
      '      fc_max_queue_wait_ms: 600000',
    ].join('\n');
    const sc = parseScenarioText(exponentialScenario({ rate: 5, gate, durationS: 20_000 }), 'little.yaml');
    const sink = new CountingSink(200);
    const s = await runScenario(sc, { sink });
    const rows = sink.seconds.filter((r) => r.t_s > 200);
    const L = rows.reduce((n, r) => n + r.inflight + r.queued, 0) / rows.length;
    const lambda = s.throughput_rps;
    const W = sink.e2eSum / sink.completed / 1000;
    expect(Math.abs(L - lambda * W) / L).toBeLessThan(0.03);
  });

  it('conserves every attempt and gives byte-identical outputs for the same scenario and seed', async () => {
    const run = async () => {
      const sink = new MemorySink(true);
      const sc = parseScenarioText(
        exponentialScenario({
          rate: 12,
          gate: ['      fc_mode: enforce', '      fc_max_outstanding: 8', '      fc_max_queue_depth: 4'].join(
            '\n',
          ),
          durationS: 400,
        }),
        'det.yaml',
      );
      const summary = await runScenario(sc, { sink });
      return { summary, text: JSON.stringify([sink.requests, sink.seconds, summary]) };
    };
    const a = await run();
    const b = await run();
    expect(a.summary.conservation_ok).toBe(true);
    expect(a.summary.anomalies).toEqual({ underflow: 0, unknown_permit: 0, tenant_table_full: 0 });
    expect(a.text).toBe(b.text);
  });
});
