import { describe, expect, test } from 'vitest';
import { FirstDataWatch, UsageTail } from './sse.js';

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
});
