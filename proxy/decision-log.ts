/**
 * The JSONL decision log: one line per request, written when the request
 * ends (see proxy/README.md for the schema). Writes are buffered by a file
 * stream up to a bound; while the disk does not keep up (the buffer is past
 * the bound and has not drained) records are dropped and counted, so a
 * stalled disk cannot grow the process without limit. `close()` flushes.
 */
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';

/** The gate's first decision for a request (the simulator's vocabulary, plus `unauthorized` and `rejected`). */
export type LogDecision = 'admit' | 'queued' | 'refuse' | 'bypass' | 'unauthorized' | 'rejected';

/** How a request ended (the simulator's Outcome vocabulary). */
export type LogOutcome = 'completed' | 'shed' | 'timed_out' | 'cancelled' | 'drained' | 'failed';

/** One decision-log line. Times in ms; null where not applicable. */
export interface DecisionRecord {
  /** Arrival time, ISO 8601 UTC with ms. */
  time: string;
  /** `externalIP:port` of the rule (or `smg`). */
  service: string;
  /** Tenant id from the credential; null for keyless traffic. */
  tenant: string | null;
  decision: LogDecision;
  /** The gate's reason (admitted, capacity_shed, queue_full, queue_timeout, drained, draining, tenant_share, no_healthy_capacity, bypass_non_inference, observe_would_shed, observe_would_queue) or a proxy one (unauthorized, body_too_large, body_timeout, proxy_body_memory_full, backend_error, backend_timeout, endpoint_down, no_endpoint). */
  reason: string;
  outcome: LogOutcome;
  /** HTTP status sent to the client; 0 when it left before any answer. */
  status: number;
  /** `error` of the refusal body, else null. */
  error: string | null;
  method: string;
  path: string;
  protocol: 'http1' | 'h2';
  /** Endpoint `IP:port` the request went to, else null. */
  endpoint: string | null;
  /** Time spent waiting in the gate's queue; null when it never waited. */
  queued_ms: number | null;
  /** Admission → first SSE `data:` event; null for unstreamed responses. */
  ttft_ms: number | null;
  /** Arrival → end of the exchange. */
  duration_ms: number;
  /** From the response's `usage`, when the backend sent one; else null. */
  prompt_tokens: number | null;
  output_tokens: number | null;
  /** `sec.ai.deny` on a non-admit decision (refused, rejected, unauthorized, or a wait that ended refused); absent otherwise. */
  event?: 'sec.ai.deny';
  /** On a sec.ai.deny record: the `model` of the request body when it was read before the decision, else null. */
  model?: string | null;
}

/** A sink for decision records. */
export interface DecisionSink {
  write(r: DecisionRecord): void;
  close(): Promise<void>;
  /** Records not written (the disk did not keep up, or the file failed). */
  readonly dropped: number;
}

export interface JsonlLogOptions {
  /** Bytes buffered for the disk before records are dropped (the stream's high-water mark). @default 1 MiB */
  bufferBytes?: number;
  /** Longest wait for the buffer to flush on close, in ms. @default 5000 */
  closeTimeoutMs?: number;
}

/** Writes records as JSON lines to a file (appending), or to a given stream. */
export class JsonlDecisionLog implements DecisionSink {
  readonly #out: Writable;
  readonly #closeMs: number;
  #failed = false;
  /** The last write found the buffer past its bound; nothing is written until it drains. */
  #blocked = false;
  #dropped = 0;

  /**
   * @param target path of the JSONL file (created or appended to), or a
   *   writable stream (its own high-water mark is the bound)
   */
  constructor(target: string | Writable, o: JsonlLogOptions = {}) {
    this.#out =
      typeof target === 'string'
        ? createWriteStream(target, { flags: 'a', highWaterMark: o.bufferBytes ?? 1024 * 1024 })
        : target;
    this.#closeMs = o.closeTimeoutMs ?? 5_000;
    const name = typeof target === 'string' ? target : 'stream';
    this.#out.on('error', (err) => {
      if (!this.#failed) process.stderr.write(`sluice proxy: decision log ${name}: ${err.message}\n`);
      this.#failed = true;
    });
  }

  get dropped(): number {
    return this.#dropped;
  }

  write(r: DecisionRecord): void {
    if (this.#failed || this.#blocked) {
      this.#dropped++;
      return;
    }
    if (!this.#out.write(`${JSON.stringify(r)}\n`)) {
      this.#blocked = true;
      this.#out.once('drain', () => {
        this.#blocked = false;
      });
    }
  }

  /** Flushes and closes; gives up after the close timeout when the disk does not drain. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#out.destroy();
        resolve();
      }, this.#closeMs);
      t.unref();
      this.#out.end(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

/** Keeps records in memory (tests). */
export class MemoryDecisionLog implements DecisionSink {
  readonly records: DecisionRecord[] = [];
  readonly dropped = 0;
  write(r: DecisionRecord): void {
    this.records.push(r);
  }
  async close(): Promise<void> {}
}
