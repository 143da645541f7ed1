/**
 * A deferred answer's end, from the status endpoint's answer: still waiting is no end; `done`
 * is judged from the stored answer as a direct one would be (JSON or SSE, full output or not);
 * `expired` is the defer store's timed-out wait; an unkept body, `cancelled`, an unreadable or
 * refused status are failures with their own reason, never a completion.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { classifyAttempt } from '../shared/goodput.js';
import type { HttpRequestSpec } from '../shared/payload.js';
import { emptyStreamFacts } from '../shared/sse.js';
import type { AttemptResult } from './attempt.js';
import { deferredLocation, deferredResult, followDeferred } from './deferred.js';
import { type Backend, startBackend } from './test/backend.js';
import { createTransport } from './transport.js';

const ACCEPTED: AttemptResult = {
  end: 'response',
  status: 202,
  headers: { location: '/sluice/deferred/d1', 'content-type': 'application/json' },
  headAtMs: 100,
  endAtMs: 101,
  facts: emptyStreamFacts(),
  generated: 0,
  finished: true,
  refusal: undefined,
  gauges: { inflight: undefined, queued: undefined, limit: undefined },
  error: '',
  body: '{"id":"d1","state":"pending"}',
};

const answer = (tokens: number) =>
  JSON.stringify({
    choices: [{ message: { content: 'x' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: tokens },
  });
const status = (state: string, result: unknown = null) => JSON.stringify({ id: 'd1', state, result });

/** The verdict on `r` for a request of 4 output tokens, deadline at 10 s. */
const verdict = (r: AttemptResult) =>
  classifyAttempt({
    inference: true,
    status: r.status,
    error: r.refusal?.error ?? '',
    clientLeft: r.end === 'deadline',
    finished: r.finished,
    generatedTokens: r.generated,
    expectedTokens: 4,
    finishReason: r.facts.finishReason,
    ttftFromFirstSendMs: r.facts.firstTokenAtMs,
    endAtMs: r.endAtMs,
    deadlineAtMs: 10_000,
    ttftSloMs: undefined,
  });

describe('a deferred answer followed to its end', () => {
  it('is recognised by a 202 with a Location path only', () => {
    expect(deferredLocation(ACCEPTED)).toBe('/sluice/deferred/d1');
    expect(deferredLocation({ ...ACCEPTED, status: 200 })).toBeUndefined();
    expect(deferredLocation({ ...ACCEPTED, headers: {} })).toBeUndefined();
    expect(deferredLocation({ ...ACCEPTED, headers: { location: 'http://elsewhere/x' } })).toBeUndefined();
    expect(deferredLocation({ ...ACCEPTED, end: 'deadline' })).toBeUndefined();
  });

  it('has not ended while the item is pending or draining', () => {
    expect(deferredResult(ACCEPTED, 200, status('pending'), 500)).toBeUndefined();
    expect(deferredResult(ACCEPTED, 200, status('draining'), 500)).toBeUndefined();
  });

  it("judges a done item's stored JSON answer as a direct one, seen when the poll saw it", () => {
    const body = answer(4);
    const r = deferredResult(
      ACCEPTED,
      200,
      status('done', { status: 200, content_type: 'application/json', body, body_kept: true }),
      2500,
    )!;
    expect(r).toMatchObject({ status: 200, endAtMs: 2500, generated: 4, finished: true, refusal: undefined });
    expect(r.facts.firstTokenAtMs).toBe(2500);
    expect(r.body).toBeUndefined();
    expect(verdict(r)).toEqual({ outcome: 'completed', good: true });
    // Short of the tokens asked: failed, as a direct short answer would be.
    const short = deferredResult(
      ACCEPTED,
      200,
      status('done', { status: 200, content_type: 'application/json', body: answer(2), body_kept: true }),
      2500,
    )!;
    expect(verdict(short).outcome).toBe('failed');
    // Seen after the deadline: completed, not good.
    const late = deferredResult(
      ACCEPTED,
      200,
      status('done', { status: 200, content_type: 'application/json', body, body_kept: true }),
      12_000,
    )!;
    expect(verdict(late)).toEqual({ outcome: 'completed', good: false });
  });

  it('reads a stored SSE answer token by token', () => {
    const sse =
      'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'.repeat(4) +
      'data: {"choices":[{"delta":{},"finish_reason":"length"}],"usage":{"completion_tokens":4}}\n\ndata: [DONE]\n\n';
    const r = deferredResult(
      ACCEPTED,
      200,
      status('done', { status: 200, content_type: 'text/event-stream', body: sse, body_kept: true }),
      3000,
    )!;
    expect(r.finished).toBe(true);
    expect(r.generated).toBe(4);
    expect(verdict(r)).toEqual({ outcome: 'completed', good: true });
  });

  it('records an expired item as the defer store timing out, and never a 202 as an outcome', () => {
    const r = deferredResult(ACCEPTED, 200, status('expired'), 4000)!;
    expect(r).toMatchObject({ status: 504, refusal: { error: 'defer_expired' } });
    expect(verdict(r).outcome).toBe('timed_out');
  });

  it('fails, with its reason, an unkept body, a cancelled item, an unreadable or refused status', () => {
    const cases: [number, string, string][] = [
      [
        200,
        status('done', { status: 200, content_type: null, body: null, body_kept: false }),
        'defer_body_not_kept',
      ],
      [200, status('cancelled'), 'defer_cancelled'],
      [200, '<html>', 'defer_status_unreadable'],
      [404, '{"error":"not_found"}', 'defer_status_404'],
    ];
    for (const [code, body, error] of cases) {
      const r = deferredResult(ACCEPTED, code, body, 900)!;
      expect(r.refusal?.error).toBe(error);
      expect(verdict(r).outcome).toBe('failed');
    }
  });
});

describe('following a deferred item over loopback', () => {
  let backend: Backend | undefined;
  afterEach(async () => {
    await backend?.close();
    backend = undefined;
  });

  /** A status endpoint that answers pending `pendingPolls` times, then done with a whole answer. */
  const statusServer = (pendingPolls: number) =>
    startBackend({
      hook: (req) => {
        if (!req.path.startsWith('/sluice/deferred/')) return undefined;
        if (req.method === 'DELETE') return { status: 200, body: status('cancelled') };
        const polls = backend!.seen.filter((s) => s.method === 'GET').length;
        if (polls <= pendingPolls) return { status: 200, body: status('pending') };
        const result = { status: 200, content_type: 'application/json', body: answer(4), body_kept: true };
        return { status: 200, body: status('done', result) };
      },
    });

  it('polls with the same credential until done, then judges the stored answer; polls are bounded', async () => {
    backend = await statusServer(2);
    const transport = createTransport(backend.url);
    const t0 = performance.now();
    const clock = () => performance.now() - t0;
    const spec: HttpRequestSpec = {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: 'Bearer tok' },
      body: '{}',
    };
    try {
      const r = await followDeferred(
        transport,
        ACCEPTED,
        '/sluice/deferred/d1',
        spec,
        'http1',
        5000,
        clock,
        20,
      ).done;
      expect(verdict(r)).toEqual({ outcome: 'completed', good: true });
      const polls = backend.seen.filter((s) => s.path === '/sluice/deferred/d1');
      expect(polls.map((s) => s.method)).toEqual(['GET', 'GET', 'GET']);
      for (const s of polls) expect(s.headers.authorization).toBe('Bearer tok');
      // Past maxPolls the attempt ends with its own reason, not a completion.
      const capped = await followDeferred(
        transport,
        ACCEPTED,
        '/sluice/deferred/d1',
        spec,
        'http1',
        5000,
        clock,
        5,
        0,
      ).done;
      expect(capped.refusal?.error).toBe('defer_poll_limit');
    } finally {
      await transport.close();
    }
  });

  it('at the client deadline withdraws the item (DELETE) and is cancelled; at the run end it stays in flight', async () => {
    backend = await statusServer(1_000_000);
    const transport = createTransport(backend.url);
    const t0 = performance.now();
    const clock = () => performance.now() - t0;
    const spec: HttpRequestSpec = {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: 'Bearer tok' },
      body: '{}',
    };
    try {
      const r = await followDeferred(
        transport,
        ACCEPTED,
        '/sluice/deferred/d1',
        spec,
        'http1',
        200,
        clock,
        20,
      ).done;
      expect(r.end).toBe('deadline');
      expect(verdict(r).outcome).toBe('cancelled');
      expect(backend.seen.filter((s) => s.method === 'DELETE').map((s) => s.path)).toEqual([
        '/sluice/deferred/d1',
      ]);
      const f = followDeferred(
        transport,
        ACCEPTED,
        '/sluice/deferred/d1',
        spec,
        'http1',
        undefined,
        clock,
        20,
      );
      await new Promise((res) => setTimeout(res, 100));
      f.stop();
      expect((await f.done).end).toBe('stopped');
      // Stopped by the run's end, the client has not left: nothing is withdrawn.
      expect(backend.seen.filter((s) => s.method === 'DELETE')).toHaveLength(1);
    } finally {
      await transport.close();
    }
  });
});
