/**
 * What a load run measured: each ended attempt classified with the simulator's goodput rules and
 * recorded as the simulator's record, the gate's decisions (in total and in the current second),
 * the gauges the gate's response headers carried, inter-token gaps of completed streams and
 * transport errors; closed into per-second rows and the run's summary.
 */
import { DECISION_REASONS, type Policy } from '../../gate/index.js';
import type { RequestDescriptor } from '../../sim/clients/schedule.js';
import { KEYLESS_LABEL } from '../../sim/clients/tenants.js';
import { LatencyHistogram } from '../../sim/run/histogram.js';
import type { RunSummary } from '../../sim/run/records.js';
import type { RunSink } from '../../sim/run/sinks.js';
import { gapsFromMs, RunStats, type SummaryMeta, summarize } from '../../sim/run/stats.js';
import { classifyAttempt, decisionReasonOf } from '../shared/goodput.js';
import type { AttemptResult } from './attempt.js';
import type { EnvelopeRules } from './envelope.js';
import { policyColumns } from './policy-record.js';
import { toRecord } from './record.js';

const zeroDecisions = (): Record<string, number> => Object.fromEntries(DECISION_REASONS.map((r) => [r, 0]));

/** The tallies of one load run, written to its sink as they are taken. */
export class LoadTally {
  readonly #stats: RunStats;
  readonly #sink: RunSink;
  readonly #ceilings: RunSummary['ceilings'];
  /** Inter-token gaps over every completed stream, ms. */
  readonly itl = new LatencyHistogram();
  /** Transport errors by message. */
  readonly transportErrors: Record<string, number> = {};
  readonly #decisionsTotal = zeroDecisions();
  #decisionsSec = zeroDecisions();
  readonly #gauges = { inflight: 0, queued: 0, limit: 0 };
  readonly #policy: { policy: Policy; rules: EnvelopeRules } | undefined;

  /**
   * @param warmupMs records sent before this run time (ms) are left out of the summary
   * @param ceilings the gate's configured ceilings, for each row and the summary
   * @param policy the run's policy: each record then carries its class columns (policy-record.ts)
   */
  constructor(
    warmupMs: number,
    sink: RunSink,
    ceilings: RunSummary['ceilings'],
    policy?: { policy: Policy; rules: EnvelopeRules },
  ) {
    this.#policy = policy;
    this.#stats = new RunStats(warmupMs);
    this.#sink = sink;
    this.#ceilings = ceilings;
  }

  /** A new request of the schedule is offered (retries are not). */
  offer(d: RequestDescriptor): void {
    if (d.inference) this.#stats.offer(d.tenant ?? KEYLESS_LABEL, d.sentAtMs);
  }

  /**
   * Records an ended attempt and returns its outcome.
   * @param inSystem the run ended with the attempt still in flight
   * @param sent the path it went to, and whether it was answered 202 and followed (for the class columns)
   */
  record(
    d: RequestDescriptor,
    r: AttemptResult,
    inSystem: boolean,
    sent: { path: string; deferred: boolean } = { path: '', deferred: false },
  ): string {
    const verdict = inSystem
      ? { outcome: 'in_system' as const, good: false }
      : classifyAttempt({
          inference: d.inference,
          status: r.status,
          error: r.refusal?.error ?? '',
          clientLeft: r.end === 'deadline',
          finished: r.finished,
          generatedTokens: r.generated,
          expectedTokens: d.outputTokens,
          finishReason: r.facts.finishReason,
          ttftFromFirstSendMs:
            r.facts.firstTokenAtMs === undefined ? undefined : r.facts.firstTokenAtMs - d.firstSentAtMs,
          endAtMs: r.endAtMs,
          deadlineAtMs: d.deadlineMs,
          ttftSloMs: d.ttftSloMs,
        });
    const rec = toRecord(d, r, verdict.outcome, verdict.good);
    if (rec.outcome === 'in_system') rec.e2e_ms = '';
    const p = this.#policy;
    if (p !== undefined)
      Object.assign(rec, policyColumns(p.policy, p.rules, d, r, rec.outcome, sent.path, sent.deferred));
    // The gaps between the SSE events that carried text, as the client read them (see RunSummary.itl_ms).
    this.#stats.record(rec, verdict.outcome === 'completed' ? gapsFromMs(r.facts.gapsMs) : undefined);
    this.#sink.request(rec);
    if (verdict.outcome === 'completed') for (const g of r.facts.gapsMs) this.itl.add(g);
    if (r.end === 'error') this.transportErrors[r.error] = (this.transportErrors[r.error] ?? 0) + 1;
    const reason =
      r.end === 'response' ? decisionReasonOf(r.status, r.refusal?.error ?? '', d.inference) : undefined;
    if (reason !== undefined) {
      this.#decisionsTotal[reason] = (this.#decisionsTotal[reason] ?? 0) + 1;
      this.#decisionsSec[reason] = (this.#decisionsSec[reason] ?? 0) + 1;
    }
    const gauges = this.#gauges;
    const gz = r.gauges;
    if (gz.inflight !== undefined) gauges.inflight = gz.inflight;
    if (gz.queued !== undefined) gauges.queued = gz.queued;
    if (gz.limit !== undefined) gauges.limit = gz.limit;
    if (gz.inflight !== undefined || gz.queued !== undefined)
      this.#stats.observe(gauges.inflight, gauges.queued);
    return verdict.outcome;
  }

  /** Closes second `sec` (from 1): its row goes to the sink, and the second's decisions restart. */
  closeSecond(sec: number): void {
    const gauges = this.#gauges;
    this.#sink.second(
      this.#stats.second(sec, {
        inflight: gauges.inflight,
        queued: gauges.queued,
        limit: gauges.limit,
        configured_limit: this.#ceilings.max_outstanding,
        queue_depth: this.#ceilings.queue_depth,
        adapt_state: '',
        decisions: this.#decisionsSec,
        endpoints: [],
      }),
    );
    this.#decisionsSec = zeroDecisions();
  }

  /** The run's summary. */
  summarize(meta: Omit<SummaryMeta, 'decisions' | 'ceilings'>): RunSummary {
    return summarize(this.#stats, { ...meta, decisions: this.#decisionsTotal, ceilings: this.#ceilings });
  }
}
