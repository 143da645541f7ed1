/**
 * The JSONL decision log: one line per request, written when the request
 * ends (see proxy/README.md for the schema). Writes are buffered by a file
 * stream up to a bound; while the disk does not keep up (the buffer is past
 * the bound and has not drained) records are dropped and counted, so a
 * stalled disk cannot grow the process without limit. `close()` flushes.
 */
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { DecisionRecord } from '../sim/clients/decision-record.js';

/** The record this log writes and its vocabulary: one home, shared with the simulator's reader. */
export type { DecisionRecord, LogDecision, RequestOutcome } from '../sim/clients/decision-record.js';

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
