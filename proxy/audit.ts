/**
 * The audit trail of refusals (capacity-gate spec: "every non-admit
 * decision is also a sec.ai.deny record on the audit trail with the
 * service, the model, and the decision"). A refused request's decision-log
 * record carries `event: "sec.ai.deny"` and the `model` of its body; the
 * same record goes to stderr as one JSON line, at most `perSecond` lines in
 * each one-second window: the rest are counted and reported by one
 * `sec.ai.deny.suppressed` line when the window ends, so a shedding storm
 * cannot flood the log.
 */
import type { DecisionRecord } from './decision-log.js';

/** Bytes of a body looked at for its model. */
const MODEL_SCAN_BYTES = 16 * 1024;

/** Whether a record is a non-admit decision: refused by the gate or the proxy, or a wait that ended refused. */
export function isDeny(r: DecisionRecord): boolean {
  switch (r.decision) {
    case 'refuse':
    case 'unauthorized':
    case 'rejected':
      return true;
    case 'queued':
      return r.outcome === 'timed_out' || r.outcome === 'drained' || r.outcome === 'shed';
    default:
      return false;
  }
}

/**
 * The top-level `model` of a JSON request body read before the decision, or
 * null. A body up to 16 KiB is parsed; of a larger one only the first 16 KiB
 * are scanned for a `"model": "..."` member.
 */
export function modelOf(body: Buffer | null): string | null {
  if (body === null || body.length === 0) return null;
  if (body.length <= MODEL_SCAN_BYTES) {
    try {
      const v: unknown = JSON.parse(body.toString('utf8'));
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        const m = (v as { model?: unknown }).model;
        return typeof m === 'string' ? m : null;
      }
    } catch {
      /* not JSON: no model */
    }
    return null;
  }
  const head = body.subarray(0, MODEL_SCAN_BYTES).toString('utf8');
  const m = /"model"\s*:\s*"((?:[^"\\]|\\.){0,256})"/.exec(head);
  if (!m) return null;
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return null;
  }
}

/** Marks `r` as a sec.ai.deny record when it is one (with the model of `body`). */
export function markDeny(r: DecisionRecord, body: Buffer | null): void {
  if (!isDeny(r)) return;
  r.event = 'sec.ai.deny';
  r.model = modelOf(body);
}

export interface AuditOptions {
  /** Most sec.ai.deny lines per second on the output; 0 writes none. @default 20 */
  perSecond?: number;
  /** Writes one line (without its newline). @default stderr */
  write?: (line: string) => void;
  /** Wall-clock ms. @default Date.now */
  now?: () => number;
}

/** The rate-limited structured log of sec.ai.deny records. */
export class AuditLog {
  readonly #n: number;
  readonly #write: (line: string) => void;
  readonly #now: () => number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #count = 0;
  #suppressed = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(o: AuditOptions = {}) {
    this.#n = o.perSecond ?? 20;
    this.#write = o.write ?? ((l: string) => process.stderr.write(`${l}\n`));
    this.#now = o.now ?? Date.now;
  }

  /** Logs `r` when it is a sec.ai.deny record, within the rate. */
  record(r: DecisionRecord): void {
    if (r.event !== 'sec.ai.deny' || this.#n <= 0) return;
    const now = this.#now();
    if (now - this.#windowStart >= 1000) this.#roll(now);
    if (this.#count < this.#n) {
      this.#count++;
      this.#write(
        JSON.stringify({
          event: 'sec.ai.deny',
          time: r.time,
          service: r.service,
          model: r.model ?? null,
          tenant: r.tenant,
          decision: r.decision,
          reason: r.reason,
          status: r.status,
          error: r.error,
        }),
      );
      return;
    }
    this.#suppressed++;
    if (this.#timer === null) {
      this.#timer = setTimeout(
        () => {
          this.#timer = null;
          this.#roll(this.#now());
        },
        Math.max(1, 1000 - (now - this.#windowStart)),
      );
      this.#timer.unref();
    }
  }

  /** Ends the window: reports what it suppressed, and starts a new one at `now`. */
  #roll(now: number): void {
    if (this.#suppressed > 0) {
      this.#write(
        JSON.stringify({ event: 'sec.ai.deny.suppressed', suppressed: this.#suppressed, window_s: 1 }),
      );
    }
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#suppressed = 0;
    this.#count = 0;
    this.#windowStart = now;
  }

  /** Reports what is still suppressed and stops the timer. */
  dispose(): void {
    this.#roll(this.#now());
  }
}
