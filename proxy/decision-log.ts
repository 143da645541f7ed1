/**
 * The JSONL decision log: one line per request, written when the request
 * ends (see proxy/README.md for the schema). Writes are buffered by a file
 * stream; `close()` flushes.
 */
import { createWriteStream, type WriteStream } from 'node:fs';

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
  /** The gate's reason (admitted, capacity_shed, queue_full, queue_timeout, drained, draining, tenant_share, no_healthy_capacity, bypass_non_inference, observe_would_shed, observe_would_queue) or a proxy one (unauthorized, body_too_large, backend_error, client_gone). */
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
}

/** A sink for decision records. */
export interface DecisionSink {
  write(r: DecisionRecord): void;
  close(): Promise<void>;
}

/** Writes records as JSON lines to a file (appending). */
export class JsonlDecisionLog implements DecisionSink {
  readonly #out: WriteStream;
  #failed = false;

  /** @param file path of the JSONL file; created or appended to */
  constructor(file: string) {
    this.#out = createWriteStream(file, { flags: 'a' });
    this.#out.on('error', (err) => {
      if (!this.#failed) process.stderr.write(`sluice proxy: decision log ${file}: ${err.message}\n`);
      this.#failed = true;
    });
  }

  write(r: DecisionRecord): void {
    if (!this.#failed) this.#out.write(`${JSON.stringify(r)}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#out.end(() => resolve()));
  }
}

/** Keeps records in memory (tests). */
export class MemoryDecisionLog implements DecisionSink {
  readonly records: DecisionRecord[] = [];
  write(r: DecisionRecord): void {
    this.records.push(r);
  }
  async close(): Promise<void> {}
}
