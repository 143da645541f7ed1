/**
 * A deferred request followed to its end, as a batch client would: the policy's `202 Accepted`
 * carries a `Location` (the status endpoint, `/sluice/deferred/ID`); the driver polls it with the
 * request's own credential until the item is `done`, `expired` or `cancelled`, the client's
 * deadline passes, or the run stops. The attempt is then judged from what the status endpoint
 * stored: a `done` item's answer (status, content type and body, SSE or JSON) as if it had come
 * back directly, seen when the poll saw it; `expired` as the policy's `defer_expired` (504);
 * `cancelled` as failed. The 202 itself is never an outcome. Polls are not attempts.
 *
 * At the client's deadline the attempt is `cancelled` (the client left) and the driver withdraws
 * the item with a `DELETE` of its status URL, as the simulator cancels a deferred attempt whose
 * client left (sim/run/policy-admission.ts `ended`); at the run's end it stays `in_system`, and
 * nothing is withdrawn.
 *
 * TTFT: the answer reaches the client whole when a poll sees it, so its first token is then too
 * (TTFT = e2e), as the simulator times a non-streamed answer for its client (`clientTtft`, set by
 * `sluice fidelity`). The simulator's default TTFT of a deferred request is the engine's first
 * token after the drain, which a client of the status endpoint cannot see: earlier than the
 * driver's by the rest of the generation and up to one poll interval.
 *
 * A `done` item whose body the proxy did not keep (no `--defer-db`, or an answer above the
 * store's size bound) cannot be checked for its full output, so it is recorded `failed` with the
 * error `defer_body_not_kept` rather than assumed whole.
 */

import { parseRefusal } from '../shared/goodput.js';
import type { HttpRequestSpec } from '../shared/payload.js';
import { completionFacts, emptyStreamFacts } from '../shared/sse.js';
import type { AttemptHandle, AttemptResult } from './attempt.js';
import { startAttempt } from './attempt.js';
import type { Transport } from './transport.js';

/** Default time between two polls of a deferred item's status, ms. */
export const DEFER_POLL_MS = 500;
/** Most polls of one deferred item; past them the attempt ends `failed` (`defer_poll_limit`). */
export const DEFER_MAX_POLLS = 100_000;
/** Longest wait for the answer to the DELETE that withdraws an item when its client leaves, ms. */
export const CANCEL_MS = 1000;

/** What the status endpoint answers (the fields the driver reads). */
interface StatusBody {
  state?: unknown;
  result?: { status?: unknown; content_type?: unknown; body?: unknown; body_kept?: unknown } | null;
}

/** The status URL of a deferred answer: a 202 with a `Location`; undefined otherwise. */
export function deferredLocation(r: AttemptResult): string | undefined {
  if (r.end !== 'response' || r.status !== 202) return undefined;
  const loc = r.headers.location;
  return loc?.startsWith('/') ? loc : undefined;
}

/**
 * The attempt's result from one status answer, or undefined while the item still waits
 * (`pending`, `draining`). `first` is the 202's result, `seenAtMs` when the poll's answer came.
 */
export function deferredResult(
  first: AttemptResult,
  status: number,
  body: string,
  seenAtMs: number,
): AttemptResult | undefined {
  if (status !== 200) return ended(first, seenAtMs, 0, `defer_status_${status}`);
  let parsed: StatusBody;
  try {
    parsed = JSON.parse(body) as StatusBody;
  } catch {
    return ended(first, seenAtMs, 0, 'defer_status_unreadable');
  }
  const state = parsed.state;
  if (state === 'pending' || state === 'draining') return undefined;
  if (state === 'expired') return { ...ended(first, seenAtMs, 504, 'defer_expired'), finished: true };
  if (state !== 'done') return ended(first, seenAtMs, 0, `defer_${String(state)}`);
  const res = parsed.result ?? null;
  const code = typeof res?.status === 'number' ? res.status : 0;
  if (typeof res?.body !== 'string') return ended(first, seenAtMs, code, 'defer_body_not_kept');
  const sse = typeof res.content_type === 'string' && res.content_type.includes('text/event-stream');
  const ok = code >= 200 && code < 300;
  const facts = ok ? completionFacts(res.body, sse, seenAtMs) : { ...emptyStreamFacts(), generated: 0 };
  // The answer reaches the client whole, when the poll sees it: its first token then too.
  if (ok) facts.firstTokenAtMs = seenAtMs;
  const { body: _kept, ...rest } = first;
  return {
    ...rest,
    status: code,
    headAtMs: seenAtMs,
    endAtMs: seenAtMs,
    facts,
    generated: facts.generated,
    finished: ok ? facts.done || !sse : true,
    // A stored refusal (the replay was refused, or ran out of time) says why, as a direct one would.
    refusal: code >= 400 ? parseRefusal(res.body, {}) : undefined,
    error: '',
  };
}

/**
 * An attempt that ended at `atMs` with `status`, its reason (`error`, '' for none) in the
 * refusal's place so that the record's `error` column carries it; no answer to judge.
 */
function ended(first: AttemptResult, atMs: number, status: number, error: string): AttemptResult {
  const { body: _kept, ...rest } = first;
  return {
    ...rest,
    end: 'response',
    status,
    headAtMs: atMs,
    endAtMs: atMs,
    facts: emptyStreamFacts(),
    generated: 0,
    finished: false,
    refusal:
      error === ''
        ? undefined
        : { error, retryAfterSec: undefined, jitterHintMs: undefined, queuedMs: undefined },
    error: '',
  };
}

/**
 * Polls `location` (with `spec`'s headers, as a GET) every `pollMs` until {@link deferredResult}
 * gives the attempt's end; stops at `deadlineAtMs` (the client gives up: `deadline`) or on
 * `stop()` (the run ended: `stopped`).
 */
export function followDeferred(
  transport: Transport,
  first: AttemptResult,
  location: string,
  spec: HttpRequestSpec,
  protocol: 'http1' | 'h2',
  deadlineAtMs: number | undefined,
  clock: () => number,
  pollMs = DEFER_POLL_MS,
  maxPolls = DEFER_MAX_POLLS,
): AttemptHandle {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.headers)) if (k.toLowerCase() !== 'content-type') headers[k] = v;
  const poll: HttpRequestSpec = { method: 'GET', path: location, headers, body: null };
  let resolve!: (r: AttemptResult) => void;
  const done = new Promise<AttemptResult>((r) => {
    resolve = r;
  });
  let settled = false;
  let leaving = false;
  let timer: NodeJS.Timeout | undefined;
  let current: AttemptHandle | undefined;
  let polls = 0;
  const settle = (r: AttemptResult): void => {
    if (settled) return;
    settled = true;
    if (timer !== undefined) clearTimeout(timer);
    resolve(r);
  };
  const giveUp = (end: 'deadline' | 'stopped'): void => {
    if (settled) return;
    // Withdrawing already (the client left): the run's end cuts the DELETE short, its record stays.
    if (leaving) {
      current?.stop();
      return;
    }
    current?.stop();
    const r: AttemptResult = { ...ended(first, clock(), 0, ''), end };
    if (end === 'stopped') {
      settle(r);
      return;
    }
    // The client leaves: it withdraws its item (DELETE), as the simulator cancels a deferred
    // attempt whose client left, so that the drain does not run work nobody waits for. Bounded
    // by CANCEL_MS; its answer (409 when the item is no longer pending) changes nothing.
    leaving = true;
    if (timer !== undefined) clearTimeout(timer);
    const cancel = startAttempt(
      transport,
      { ...poll, method: 'DELETE' },
      protocol,
      false,
      clock() + CANCEL_MS,
      clock,
    );
    current = cancel;
    void cancel.done.then(() => settle(r));
  };
  const pollOnce = (): void => {
    polls++;
    const h = startAttempt(transport, poll, protocol, false, deadlineAtMs, clock);
    current = h;
    void h.done.then((r) => {
      if (current === h) current = undefined;
      if (settled || leaving || r.end === 'stopped') return;
      if (r.end === 'deadline') {
        giveUp('deadline');
        return;
      }
      // A poll lost to the network is tried again; an answer either ends the attempt or not yet.
      const res = r.end === 'response' ? deferredResult(first, r.status, r.body ?? '', r.endAtMs) : undefined;
      if (res !== undefined) settle(res);
      else next();
    });
  };
  const next = (): void => {
    if (settled) return;
    const now = clock();
    if (deadlineAtMs !== undefined && now >= deadlineAtMs) giveUp('deadline');
    else if (polls >= maxPolls) settle(ended(first, now, 0, 'defer_poll_limit'));
    else {
      const wait = deadlineAtMs === undefined ? pollMs : Math.min(pollMs, Math.max(0, deadlineAtMs - now));
      timer = setTimeout(() => {
        timer = undefined;
        if (settled) return;
        if (deadlineAtMs !== undefined && clock() >= deadlineAtMs) giveUp('deadline');
        else pollOnce();
      }, wait);
    }
  };
  next();
  return { done, stop: () => giveUp('stopped') };
}
