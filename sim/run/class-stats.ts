/**
 * Per-class outcomes of a run whose clients carry envelope classes: offered, completed, useful
 * on-time completions (the client still waited, and the deadline was met), late completions, and
 * with a policy the dispositions, reject reasons and queue waits. Over the measured window.
 */
import { LatencyHistogram } from './histogram.js';
import type { ClassSummary, RequestRecord } from './records.js';
import { percentiles } from './stats.js';

interface ClassAcc {
  offered: number;
  attempts: number;
  completed: number;
  useful: number;
  late: number;
  dispositions: Record<string, number>;
  reasons: Record<string, number>;
  queueWait: LatencyHistogram;
}

export class ClassStats {
  readonly #classes = new Map<string, ClassAcc>();

  /** @param warmupMs attempts sent before this are left out */
  constructor(
    readonly warmupMs: number,
    classOrder: readonly string[] = [],
  ) {
    for (const c of classOrder) this.#acc(c);
  }

  #acc(c: string): ClassAcc {
    let a = this.#classes.get(c);
    if (a === undefined) {
      a = {
        offered: 0,
        attempts: 0,
        completed: 0,
        useful: 0,
        late: 0,
        dispositions: {},
        reasons: {},
        queueWait: new LatencyHistogram(),
      };
      this.#classes.set(c, a);
    }
    return a;
  }

  /** One ended attempt (records without a class are not counted). */
  record(r: RequestRecord): void {
    if (r.class === undefined || !r.inference || r.sent_ms < this.warmupMs) return;
    const a = this.#acc(r.class);
    a.attempts++;
    if (r.attempt === 1) a.offered++;
    if (r.disposition !== undefined && r.disposition !== '')
      a.dispositions[r.disposition] = (a.dispositions[r.disposition] ?? 0) + 1;
    if (r.disposition === 'reject' && r.reason !== undefined && r.reason !== '')
      a.reasons[r.reason] = (a.reasons[r.reason] ?? 0) + 1;
    if (r.disposition === 'queue' && r.queue_wait_ms !== '' && r.outcome !== 'in_system')
      a.queueWait.add(r.queue_wait_ms);
    if (r.outcome !== 'completed') return;
    a.completed++;
    if (r.useful === true) a.useful++;
    if (r.deadline_met === false) a.late++;
  }

  /** The classes in first-seen order (the policy's order when given). */
  summary(): ClassSummary[] {
    return [...this.#classes].map(([name, a]) => ({
      class: name,
      offered: a.offered,
      attempts: a.attempts,
      completed: a.completed,
      useful_on_time: a.useful,
      useful_share: a.offered === 0 ? 0 : Math.round((a.useful / a.offered) * 1e4) / 1e4,
      completed_late: a.late,
      dispositions: a.dispositions,
      reject_reasons: a.reasons,
      queue_wait_ms: percentiles(a.queueWait),
    }));
  }
}
