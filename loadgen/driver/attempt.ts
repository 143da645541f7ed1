/**
 * One attempt on the wire: send, watch the head and the body (SSE token by token, or a whole
 * JSON), enforce the client's deadline by aborting, and report what was seen with the times on the
 * driver's clock. The verdict (outcome, good) is the shared goodput module's.
 */
import { type AdmissionGauges, admissionGauges, parseRefusal, type RefusalInfo } from '../shared/goodput.js';
import type { HttpRequestSpec } from '../shared/payload.js';
import { CompletionStream, completionFacts, emptyStreamFacts, type StreamFacts } from '../shared/sse.js';
import type { Transport } from './transport.js';

/** Most body text kept for a non-streamed answer or a refusal. */
const MAX_BODY_CHARS = 1 << 20;

/** How an attempt stopped. */
export type AttemptEnd = 'response' | 'error' | 'deadline' | 'stopped';

/** What the client saw of an attempt. Times are ms on the driver's clock. */
export interface AttemptResult {
  end: AttemptEnd;
  status: number;
  headers: Record<string, string>;
  /** When the response head arrived. */
  headAtMs: number | undefined;
  endAtMs: number;
  /** Token facts of a stream (or of a whole body). */
  facts: StreamFacts;
  generated: number;
  /** The body ended properly. */
  finished: boolean;
  refusal: RefusalInfo | undefined;
  gauges: AdmissionGauges;
  /** Transport error text, '' when none. */
  error: string;
  /** The body text of a non-streamed answer or a refusal (at most 1 MiB); absent for a stream. */
  body?: string;
}

/** A running attempt: its result, and a way to stop it when the run ends. */
export interface AttemptHandle {
  readonly done: Promise<AttemptResult>;
  stop(): void;
}

/**
 * Sends `spec` and follows it to its end.
 * @param deadlineAtMs abort at this time of `clock()` (undefined: no deadline)
 */
export function startAttempt(
  transport: Transport,
  spec: HttpRequestSpec,
  protocol: 'http1' | 'h2',
  stream: boolean,
  deadlineAtMs: number | undefined,
  clock: () => number,
): AttemptHandle {
  let status = 0;
  let headers: Record<string, string> = {};
  let headAtMs: number | undefined;
  let sse: CompletionStream | null = null;
  let body = '';
  let resolve!: (r: AttemptResult) => void;
  const done = new Promise<AttemptResult>((r) => {
    resolve = r;
  });
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const finish = (end: AttemptEnd, error = ''): void => {
    if (settled) return;
    settled = true;
    if (timer !== undefined) clearTimeout(timer);
    const endAtMs = clock();
    let facts: StreamFacts;
    let generated: number;
    let finished: boolean;
    if (sse !== null) {
      facts = sse.facts;
      generated = sse.generatedTokens;
      finished = end === 'response' && facts.done;
    } else {
      const ok = status >= 200 && status < 300;
      const f = ok && end === 'response' ? completionFacts(body, false, headAtMs ?? endAtMs) : emptyFacts();
      // A plain answer arrives whole: its first token is seen with the head.
      if (ok && headAtMs !== undefined) f.firstTokenAtMs = headAtMs;
      facts = f;
      generated = 'generated' in f ? (f as { generated: number }).generated : 0;
      finished = end === 'response' && (ok ? f.done || !stream : true);
    }
    resolve({
      end,
      status,
      headers,
      headAtMs,
      endAtMs,
      facts,
      generated,
      finished,
      refusal: status >= 400 ? parseRefusal(body, headers, Date.now()) : undefined,
      gauges: admissionGauges(headers),
      error,
      ...(sse === null ? { body } : {}),
    });
  };
  if (deadlineAtMs !== undefined && clock() >= deadlineAtMs) {
    finish('deadline');
    return { done, stop: () => {} };
  }
  const inflight = transport.send(spec, protocol, {
    head(s, h) {
      status = s;
      headers = h;
      headAtMs = clock();
      const sseType = (h['content-type'] ?? '').includes('text/event-stream');
      if (s >= 200 && s < 300 && sseType) sse = new CompletionStream();
    },
    chunk(text) {
      if (sse !== null) sse.feed(text, clock());
      else if (body.length < MAX_BODY_CHARS) body += text;
    },
    end: () => finish('response'),
    error: (e) => finish('error', e.message || String(e)),
  });
  if (deadlineAtMs !== undefined) {
    timer = setTimeout(
      () => {
        inflight.abort();
        finish('deadline');
      },
      Math.max(0, deadlineAtMs - clock()),
    );
  }
  return {
    done,
    stop() {
      if (settled) return;
      inflight.abort();
      finish('stopped');
    },
  };
}

function emptyFacts(): StreamFacts & { generated: number } {
  return { ...emptyStreamFacts(), generated: 0 };
}
