import { describe, expect, it } from 'vitest';
import { ids, runToIdle, unitStepEngine } from './test/helpers.js';

describe('continuous batching (V1 scheduler)', () => {
  it('never runs more than max_num_seqs requests; the rest wait in arrival order', () => {
    const e = unitStepEngine({ maxNumSeqs: 2 });
    for (const id of ['a', 'b', 'c', 'd']) e.submit({ id, promptTokens: 4, outputTokens: 3 }, 0);
    const first = e.step(0);
    expect(first.batch?.numSeqs).toBe(2);
    expect(e.inspect().running.map((s) => s.id)).toEqual(['a', 'b']);
    expect(e.inspect().waiting.map((s) => s.id)).toEqual(['c', 'd']);
    const steps = runToIdle(e);
    expect(Math.max(...steps.map((s) => s.batch?.numSeqs ?? 0))).toBe(2);
    // a, b: prefill at 0, tokens at 1, 2, 3 -> finish at 3; c, d admitted at 3, finish at 6.
    expect(steps.flatMap((s) => s.finished.map((f) => `${f.request.id}@${s.atMs}`))).toEqual([
      'a@3',
      'b@3',
      'c@6',
      'd@6',
    ]);
  });

  it('spends at most max_num_batched_tokens per step: running first, then a partial chunk for the next', () => {
    const e = unitStepEngine({ maxNumBatchedTokens: 10 });
    for (const id of ['a', 'b', 'c']) e.submit({ id, promptTokens: 6, outputTokens: 5 }, 0);
    const s0 = e.step(0);
    expect(s0.batch).toMatchObject({ numSeqs: 2, numTokens: 10, numPrefillTokens: 10 });
    expect(e.inspect().waiting.map((s) => s.id)).toEqual(['c']);
    const s1 = e.step(1);
    // a got its first token and decodes (1); b finishes its prompt (2); c gets 6 of the 7 left.
    expect(ids(s1.firstTokens)).toBe('a');
    expect(s1.batch).toMatchObject({ numSeqs: 3, numTokens: 9, numPrefillTokens: 8 });
    for (const s of runToIdle(e)) expect(s.batch?.numTokens ?? 0).toBeLessThanOrEqual(10);
  });

  it('splits a long prompt into chunks over several steps and emits the first token after the last chunk', () => {
    const e = unitStepEngine({ maxNumBatchedTokens: 10 });
    e.submit({ id: 'long', promptTokens: 25, outputTokens: 2 }, 0);
    const steps = runToIdle(e);
    expect(steps.map((s) => s.batch?.numTokens ?? 0)).toEqual([10, 10, 5, 1, 0]);
    expect(steps.map((s) => ids(s.firstTokens))).toEqual(['', '', '', 'long', '']);
    expect(steps[4]?.finished.map((f) => f.request.id)).toEqual(['long']);
    expect(e.metrics().timeToFirstTokenSeconds.sum).toBeCloseTo(0.003, 12);
  });

  it('decodes of running requests go before a new prefill, which gets only the leftover budget', () => {
    const e = unitStepEngine({ maxNumBatchedTokens: 8 });
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 10 }, 0);
    e.submit({ id: 'b', promptTokens: 4, outputTokens: 10 }, 0);
    e.step(0);
    e.submit({ id: 'long', promptTokens: 20, outputTokens: 1 }, 0.5);
    const s1 = e.step(1);
    expect(s1.batch).toMatchObject({ numSeqs: 3, numTokens: 8, numPrefillTokens: 6 });
    expect(e.inspect().running.find((s) => s.id === 'long')?.numBlocks).toBe(2);
  });

  it('long_prefill_token_threshold caps one request per step', () => {
    const e = unitStepEngine({ maxNumBatchedTokens: 64, longPrefillTokenThreshold: 8 });
    e.submit({ id: 'a', promptTokens: 20, outputTokens: 1 }, 0);
    expect(runToIdle(e).map((s) => s.batch?.numTokens ?? 0)).toEqual([8, 8, 4, 0]);
  });

  it('gauges reflect the last step: running, waiting and KV usage', () => {
    const e = unitStepEngine({ maxNumSeqs: 1, numGpuBlocks: 10 });
    e.submit({ id: 'a', promptTokens: 8, outputTokens: 2 }, 0);
    e.submit({ id: 'b', promptTokens: 8, outputTokens: 2 }, 0);
    const before = e.metrics();
    expect([before.numRequestsRunning, before.numRequestsWaiting, before.kvCacheUsage]).toEqual([0, 0, 0]);
    e.step(0);
    const after = e.metrics();
    expect([after.numRequestsRunning, after.numRequestsWaiting, after.kvCacheUsage]).toEqual([1, 1, 0.2]);
  });
});

describe('KV blocks and recompute preemption', () => {
  // 4 blocks of 4 tokens; three requests of prompt 4 + output 10; two may run at once.
  function pressured() {
    const e = unitStepEngine({ maxNumSeqs: 2, blockSize: 4, numGpuBlocks: 4, maxModelLen: 16 });
    for (const id of ['A', 'B', 'C']) e.submit({ id, promptTokens: 4, outputTokens: 10 }, 0);
    return e;
  }

  it('allocates 16-token-style blocks as sequences grow', () => {
    const e = pressured();
    e.step(0);
    expect(e.inspect().usedBlocks).toBe(2);
    e.step(1);
    // Each now computes token 5, which needs a second block.
    expect(e.inspect().running.map((s) => s.numBlocks)).toEqual([2, 2]);
  });

  it('preempts the newest running request when blocks run out; it goes to the front of WAITING with nothing computed', () => {
    const e = pressured();
    for (let t = 0; t < 5; t++) expect(e.step(t).preempted).toEqual([]);
    const s5 = e.step(5);
    expect(ids(s5.preempted)).toBe('B');
    expect(ids(s5.tokens)).toBe('A,B');
    const { running, waiting, usedBlocks } = e.inspect();
    expect(running.map((s) => s.id)).toEqual(['A']);
    expect(waiting).toEqual([
      { id: 'B', numComputedTokens: 0, generatedTokens: 5, numBlocks: 0, preemptions: 1 },
      { id: 'C', numComputedTokens: 0, generatedTokens: 0, numBlocks: 0, preemptions: 0 },
    ]);
    expect(usedBlocks).toBe(3);
    expect(e.metrics().numPreemptions).toBe(1);
  });

  it('counts the tokens a preemption threw away among those computed for nobody', () => {
    const e = pressured();
    for (let t = 0; t <= 5; t++) e.step(t);
    // B was preempted at 5 with its prompt (4) and the decodes of tokens 1-4 computed.
    expect(e.inspect().waiting[0]).toMatchObject({ id: 'B', numComputedTokens: 0 });
    e.abort('B', 5.5);
    expect(e.metrics().abortedComputedTokens).toBe(8);
    expect(e.metrics().abortedGeneratedTokens).toBe(5);
  });

  it('the preempted request resumes first, recomputes prompt + output, and keeps its emitted tokens', () => {
    const e = pressured();
    const steps = runToIdle(e);
    const at = (id: string) => steps.filter((s) => s.tokens.some((r) => r.id === id)).map((s) => s.atMs);
    expect(at('A')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // B: 5 tokens, preempted at 5, re-admitted at 10 ahead of C recomputing 9 tokens, then 5 more.
    expect(at('B')).toEqual([1, 2, 3, 4, 5, 11, 12, 13, 14, 15]);
    expect(steps.find((s) => s.atMs === 10)?.batch).toMatchObject({ numSeqs: 2, numTokens: 13 });
    const m = e.metrics();
    expect(m.generationTokens).toBe(30);
    expect(m.requestSuccess).toEqual({ stop: 3, length: 0, abort: 0 });
    // B's gap 5 -> 11 is one inter-token latency of 6 ms.
    expect(m.interTokenLatencySeconds.sum).toBeCloseTo(0.036, 12);
    expect(e.inspect().usedBlocks).toBe(0);
  });

  it('rejects a request that could never fit: too long for max_model_len or the whole KV cache', () => {
    const e = unitStepEngine({ blockSize: 4, numGpuBlocks: 4, maxModelLen: 100 });
    expect(e.submit({ id: 'x', promptTokens: 90, outputTokens: 11 }, 0)).toEqual({
      accepted: false,
      reason: 'too_long',
    });
    expect(e.submit({ id: 'y', promptTokens: 16, outputTokens: 1 }, 0)).toEqual({
      accepted: false,
      reason: 'too_long',
    });
    expect(e.submit({ id: 'z', promptTokens: 15, outputTokens: 1 }, 0)).toMatchObject({ accepted: true });
    expect(e.submit({ id: 'z', promptTokens: 1, outputTokens: 1 }, 0)).toEqual({
      accepted: false,
      reason: 'duplicate_id',
    });
    expect(e.submit({ id: 'w', promptTokens: 0, outputTokens: 1 }, 0)).toEqual({
      accepted: false,
      reason: 'invalid',
    });
  });
});

describe('request ids', () => {
  it('hands over the progress of an accepted request, the same object progress(id) returns', () => {
    const e = unitStepEngine();
    const r = e.submit({ id: 'a', promptTokens: 4, outputTokens: 3 }, 0);
    expect(r.accepted && r.progress).toBe(e.progress('a'));
    e.step(0);
    e.step(1);
    expect(e.progress('a')?.emittedTokens).toBe(1);
  });

  it('refuses a duplicate id and keeps the request it holds, running or waiting', () => {
    const e = unitStepEngine();
    const a = { id: 'a', promptTokens: 4, outputTokens: 5 };
    const b = { id: 'b', promptTokens: 4, outputTokens: 5 };
    e.submit(a, 0);
    e.step(0);
    e.submit(b, 0.5);
    expect(e.inspect().running.map((s) => s.id)).toEqual(['a']);
    expect(e.inspect().waiting.map((s) => s.id)).toEqual(['b']);
    for (const id of ['a', 'b']) {
      expect(e.submit({ id, promptTokens: 2, outputTokens: 1 }, 0.5)).toEqual({
        accepted: false,
        reason: 'duplicate_id',
      });
    }
    expect(e.abort('a', 0.6)).toBe(a);
    expect(e.abort('b', 0.6)).toBe(b);
    expect(e.nextStepAt()).toBe(1);
  });

  it('holds nothing of a request refused as too long', () => {
    const e = unitStepEngine({ maxModelLen: 16 });
    expect(e.submit({ id: 'x', promptTokens: 16, outputTokens: 1 }, 0)).toMatchObject({ reason: 'too_long' });
    expect(e.progress('x')).toBeUndefined();
    expect(e.nextStepAt()).toBeNull();
    expect(e.submit({ id: 'x', promptTokens: 8, outputTokens: 1 }, 0)).toMatchObject({ accepted: true });
  });
});

describe('without an id index (indexIds: false)', () => {
  for (const indexIds of [true, false]) {
    it(`finds running and waiting requests by id (indexIds: ${indexIds})`, () => {
      const e = unitStepEngine({ maxNumSeqs: 1 }, { indexIds });
      const a = { id: 'a', promptTokens: 4, outputTokens: 5 };
      const b = { id: 'b', promptTokens: 4, outputTokens: 5 };
      e.submit(a, 0);
      e.submit(b, 0);
      e.step(0);
      e.step(1);
      expect(e.progress('a')?.emittedTokens).toBe(1);
      expect(e.progress('b')?.emittedTokens).toBe(0);
      expect(e.progress('c')).toBeUndefined();
      expect(e.abort('b', 1.5)).toBe(b);
      expect(e.abort('b', 1.5)).toBeUndefined();
      expect(e.abort('a', 1.5)).toBe(a);
      expect(e.nextStepAt()).toBe(2);
      e.step(2);
      expect(e.nextStepAt()).toBeNull();
    });

    it(`a restart loses the held requests in submit order, preempted ones too (indexIds: ${indexIds})`, () => {
      // Two may run; the third waits; blocks run out and preempt the newest running one.
      const e = unitStepEngine(
        { maxNumSeqs: 2, blockSize: 4, numGpuBlocks: 4, maxModelLen: 16 },
        { indexIds },
      );
      for (const id of ['A', 'B', 'C']) e.submit({ id, promptTokens: 4, outputTokens: 10 }, 0);
      for (let t = 0; t <= 5; t++) e.step(t);
      expect(e.inspect().waiting.map((s) => s.id)).toEqual(['B', 'C']);
      e.submit({ id: 'D', promptTokens: 4, outputTokens: 2 }, 5.5);
      expect(e.restart(6).map((r) => r.id)).toEqual(['A', 'B', 'C', 'D']);
      expect(e.nextStepAt()).toBeNull();
    });
  }

  it('does not refuse a duplicate id: the host promises unique ones', () => {
    const e = unitStepEngine({}, { indexIds: false });
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 2 }, 0);
    expect(e.submit({ id: 'a', promptTokens: 4, outputTokens: 2 }, 0).accepted).toBe(true);
  });
});

describe('abort (client cancel)', () => {
  it('frees the blocks of a running request and counts the tokens made for nobody', () => {
    const e = unitStepEngine({ blockSize: 4 });
    e.submit({ id: 'a', promptTokens: 8, outputTokens: 100 }, 0);
    e.submit({ id: 'b', promptTokens: 4, outputTokens: 100 }, 0);
    for (let t = 0; t <= 3; t++) e.step(t);
    // a has 8 prompt + 3 emitted tokens (10 computed, 3 blocks); b has 4 + 3 (6 computed, 2 blocks).
    expect(e.inspect().usedBlocks).toBe(5);
    expect(e.abort('a', 3.5)?.id).toBe('a');
    expect(e.inspect().usedBlocks).toBe(2);
    expect(e.inspect().running.map((s) => s.id)).toEqual(['b']);
    const m = e.metrics();
    expect(m.requestSuccess.abort).toBe(1);
    expect(m.abortedGeneratedTokens).toBe(3);
    // 8 prompt tokens, then decodes of tokens 1 and 2 (token 3's decode was in flight).
    expect(m.abortedComputedTokens).toBe(10);
  });

  it('does not count the KV a decode engine received as computed there', () => {
    const e = unitStepEngine({}, { role: 'decode' });
    e.submit({ id: 'd', promptTokens: 8, outputTokens: 5 }, 0);
    e.step(0);
    e.step(1);
    e.abort('d', 1.5);
    // One decode completed here (the second is in flight); the 8 prompt tokens came with the request.
    expect(e.metrics().abortedComputedTokens).toBe(1);
  });

  it('the aborted request gets no token from the batch that was in flight', () => {
    const e = unitStepEngine();
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 5 }, 0);
    e.submit({ id: 'b', promptTokens: 4, outputTokens: 5 }, 0);
    e.step(0);
    e.abort('a', 0.5);
    const s1 = e.step(1);
    expect(ids(s1.tokens)).toBe('b');
    expect(e.metrics().generationTokens).toBe(1);
  });

  it('removes a waiting request and ignores unknown ids', () => {
    const e = unitStepEngine({ maxNumSeqs: 1 });
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 2 }, 0);
    e.submit({ id: 'b', promptTokens: 4, outputTokens: 2 }, 0);
    e.step(0);
    expect(e.abort('b', 0.1)?.id).toBe('b');
    expect(e.abort('nope', 0.1)).toBeUndefined();
    expect(e.numWaiting).toBe(0);
    expect(ids(runToIdle(e).flatMap((s) => s.finished.map((f) => f.request)))).toBe('a');
  });

  it('an engine with nothing left has no next step', () => {
    const e = unitStepEngine();
    expect(e.nextStepAt()).toBeNull();
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 2 }, 7);
    expect(e.nextStepAt()).toBe(7);
    e.abort('a', 7);
    expect(e.nextStepAt()).toBeNull();
  });
});

describe('P/D roles and restart', () => {
  it('a prefill-role engine finishes each request at its first token with reason length', () => {
    const e = unitStepEngine({ maxNumBatchedTokens: 16 }, { role: 'prefill' });
    e.submit({ id: 'p', promptTokens: 40, outputTokens: 200 }, 0);
    const steps = runToIdle(e);
    expect(steps.map((s) => s.batch?.numTokens ?? 0)).toEqual([16, 16, 8, 0]);
    expect(steps[3]?.finished).toEqual([
      { request: expect.objectContaining({ id: 'p' }), reason: 'length', emittedTokens: 1 },
    ]);
    expect(e.inspect().usedBlocks).toBe(0);
  });

  it('a decode-role engine starts with the prompt KV present and makes the remaining tokens', () => {
    const e = unitStepEngine({ blockSize: 16 }, { role: 'decode' });
    e.submit({ id: 'd', promptTokens: 100, outputTokens: 3 }, 0);
    const s0 = e.step(0);
    expect(s0.batch).toMatchObject({ numSeqs: 1, numTokens: 1, numPrefillTokens: 0 });
    expect(e.inspect().running[0]?.numBlocks).toBe(7);
    const steps = runToIdle(e);
    expect(steps.map((s) => ids(s.tokens))).toEqual(['d', 'd']);
    expect(steps[1]?.finished[0]?.emittedTokens).toBe(2);
    expect(e.submit({ id: 'one', promptTokens: 10, outputTokens: 1 }, 5)).toEqual({
      accepted: false,
      reason: 'invalid',
    });
  });

  it('restart loses every request, frees the KV cache and resets the counters', () => {
    const e = unitStepEngine();
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 10 }, 0);
    e.submit({ id: 'b', promptTokens: 4, outputTokens: 10 }, 0);
    e.step(0);
    e.step(1);
    expect(ids(e.restart(1.5))).toBe('a,b');
    expect(e.nextStepAt()).toBeNull();
    expect(e.inspect().usedBlocks).toBe(0);
    expect(e.metrics().generationTokens).toBe(0);
  });

  it('step() before the batch in flight ends is a host error', () => {
    const e = unitStepEngine();
    e.submit({ id: 'a', promptTokens: 4, outputTokens: 10 }, 0);
    e.step(0);
    expect(() => e.step(0.5)).toThrow(RangeError);
  });
});

describe('limits the running batch can hold', () => {
  it('refuses a limit above int32, the width of the batch counters, naming it', () => {
    const big = 2 ** 31;
    expect(() => unitStepEngine({ maxModelLen: big })).toThrow(
      /max_model_len \(2147483648\) must be <= 2147483647/,
    );
    expect(() => unitStepEngine({ numGpuBlocks: big })).toThrow(
      /num_gpu_blocks \(2147483648\) must be <= 2147483647/,
    );
    expect(() => unitStepEngine({ maxNumBatchedTokens: big })).toThrow(
      /max_num_batched_tokens \(2147483648\) must be <= 2147483647/,
    );
    expect(() => unitStepEngine({ maxModelLen: big - 1 })).not.toThrow();
  });

  it('counts a request of two billion tokens to its last token (no wrap just below the limit)', () => {
    const max = 2 ** 31 - 1;
    const e = unitStepEngine({
      maxModelLen: max,
      maxNumBatchedTokens: max,
      blockSize: 256,
      numGpuBlocks: 8_000_000,
    });
    expect(e.submit({ id: 'long', promptTokens: 2_000_000_000, outputTokens: 3 }, 0).accepted).toBe(true);
    const steps = runToIdle(e);
    // One prefill of the whole prompt, then one-token decodes: a counter that wrapped would
    // make the scheduler prefill again.
    expect(steps.map((s) => s.batch?.numTokens ?? null)).toEqual([2_000_000_000, 1, 1, null]);
    const finished = steps.flatMap((s) => s.finished.map((f) => [f.request.id, f.emittedTokens]));
    expect(finished).toEqual([['long', 3]]);
    expect(e.numRunning).toBe(0);
  });
});
