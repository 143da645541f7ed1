import { describe, expect, test } from 'vitest';
import { FirstDataWatch, USAGE_TAIL_BYTES, UsageTail } from './sse.js';

describe('SSE watch', () => {
  test('finds the first data field across chunk boundaries, not inside a line', () => {
    const w = new FirstDataWatch();
    expect(w.feed(Buffer.from(': comment data: x\nevent: a\nda'))).toBe(false);
    expect(w.feed(Buffer.from('ta: {"x":1}\n\n'))).toBe(true);
    expect(w.feed(Buffer.from('data: again\n\n'))).toBe(false);
  });

  test('reads the last usage object from the tail', () => {
    const t = new UsageTail();
    t.feed(Buffer.from('x'.repeat(10_000)));
    t.feed(Buffer.from('data: {"usage":{"prompt_tokens":12,"completion_tokens":5}}\n\ndata: [DONE]\n\n'));
    expect(t.usage()).toEqual({ prompt: 12, output: 5 });
    expect(new UsageTail().usage()).toEqual({ prompt: null, output: null });
  });

  test('reads counts with spaces around the colon, and falls back when the last key has no number', () => {
    const t = new UsageTail();
    t.feed(Buffer.from('{"usage":{"prompt_tokens" :\n 31, "completion_tokens": 9}}'));
    expect(t.usage()).toEqual({ prompt: 31, output: 9 });
    const u = new UsageTail();
    u.feed(
      Buffer.from('{"prompt_tokens":4,"completion_tokens":2} {"prompt_tokens":null,"completion_tokens":"x"}'),
    );
    expect(u.usage()).toEqual({ prompt: 4, output: 2 });
  });

  test('keeps exactly the last USAGE_TAIL_BYTES across many small chunks that wrap the ring', () => {
    const t = new UsageTail();
    // An old usage object that scrolls out of the tail, then one split across chunks at the wrap.
    t.feed(Buffer.from('{"usage":{"prompt_tokens":1,"completion_tokens":1}}'));
    for (let i = 0; i < 50; i++) t.feed(Buffer.from(`data: ${'p'.repeat(90)}\n\n`));
    const last = '{"usage":{"prompt_tokens":77,"completion_tokens":88}}';
    for (const c of last) t.feed(Buffer.from(c));
    expect(t.usage()).toEqual({ prompt: 77, output: 88 });
    const u = new UsageTail();
    u.feed(Buffer.from(`{"prompt_tokens":5,"completion_tokens":6}${'q'.repeat(USAGE_TAIL_BYTES - 20)}`));
    expect(u.usage()).toEqual({ prompt: null, output: null });
    u.feed(Buffer.alloc(0));
    expect(new UsageTail().usage()).toEqual({ prompt: null, output: null });
  });

  test('a released ring is reused clean', () => {
    const t = new UsageTail();
    t.feed(Buffer.from(`${'r'.repeat(USAGE_TAIL_BYTES)}{"prompt_tokens":9,"completion_tokens":8}`));
    expect(t.usage()).toEqual({ prompt: 9, output: 8 });
    t.release();
    expect(t.usage()).toEqual({ prompt: null, output: null });
    const u = new UsageTail();
    u.feed(Buffer.from('{"prompt_tokens":2'));
    expect(u.usage()).toEqual({ prompt: 2, output: null });
    u.release();
    u.release();
  });
});
