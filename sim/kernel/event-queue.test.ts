import { describe, expect, it } from 'vitest';
import { EventQueue } from './event-queue.js';

function drain(q: EventQueue): string[] {
  const out = EventQueue.poppedEvent();
  const seen: string[] = [];
  while (q.pop(out)) seen.push(`${out.time}:${String(out.arg)}`);
  return seen;
}

const record = (_: string): void => {};

describe('EventQueue', () => {
  it('pops events in time order', () => {
    const q = new EventQueue();
    for (const t of [50, 10, 40, 20, 30]) q.push(t, record, `t${t}`);
    expect(drain(q)).toEqual(['10:t10', '20:t20', '30:t30', '40:t40', '50:t50']);
  });

  it('breaks ties at the same time first-in first-out', () => {
    const q = new EventQueue();
    q.push(5, record, 'a');
    q.push(1, record, 'early');
    q.push(5, record, 'b');
    q.push(5, record, 'c');
    q.push(5, record, 'd');
    expect(drain(q)).toEqual(['1:early', '5:a', '5:b', '5:c', '5:d']);
  });

  it('keeps FIFO ties across heap growth with many equal times', () => {
    const q = new EventQueue();
    for (let i = 0; i < 1000; i++) q.push(i % 3, (_: number) => {}, i);
    const out = EventQueue.poppedEvent();
    const byTime = new Map<number, number[]>();
    while (q.pop(out)) {
      const list = byTime.get(out.time) ?? [];
      list.push(out.arg as number);
      byTime.set(out.time, list);
    }
    expect([...byTime.keys()]).toEqual([0, 1, 2]);
    for (const list of byTime.values()) expect(list).toEqual([...list].sort((a, b) => a - b));
    expect(byTime.get(2)?.slice(0, 3)).toEqual([2, 5, 8]);
  });

  it('skips a cancelled event and reports size without it', () => {
    const q = new EventQueue();
    q.push(1, record, 'a');
    const b = q.push(2, record, 'b');
    q.push(3, record, 'c');
    expect(q.cancel(b)).toBe(true);
    expect(q.size).toBe(2);
    expect(drain(q)).toEqual(['1:a', '3:c']);
  });

  it('cancelling the earliest event moves peekTime to the next one', () => {
    const q = new EventQueue();
    const a = q.push(1, record, 'a');
    q.push(7, record, 'b');
    q.cancel(a);
    expect(q.peekTime()).toBe(7);
  });

  it('rejects cancelling twice, after the event ran, and a stale handle whose slot was reused', () => {
    const q = new EventQueue();
    const out = EventQueue.poppedEvent();
    const a = q.push(1, record, 'a');
    expect(q.cancel(a)).toBe(true);
    expect(q.cancel(a)).toBe(false);
    const b = q.push(2, record, 'b');
    q.pop(out);
    expect(q.cancel(b)).toBe(false);
    const c = q.push(3, record, 'c');
    expect(q.cancel(b)).toBe(false);
    expect(q.size).toBe(1);
    expect(q.cancel(c)).toBe(true);
    expect(q.size).toBe(0);
    expect(q.pop(out)).toBe(false);
  });

  it('reports Infinity from peekTime when empty', () => {
    expect(new EventQueue().peekTime()).toBe(Number.POSITIVE_INFINITY);
  });

  it('matches a sorted reference on a random mix of pushes, pops and cancels', () => {
    const q = new EventQueue();
    const ref: { time: number; seq: number; handle: number }[] = [];
    let seq = 0;
    let x = 12345;
    const rand = (): number => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x / 2147483648;
    };
    const out = EventQueue.poppedEvent();
    for (let i = 0; i < 5000; i++) {
      const r = rand();
      if (r < 0.55) {
        const time = Math.floor(rand() * 100);
        ref.push({ time, seq, handle: q.push(time, (_: number) => {}, seq) });
        seq++;
      } else if (r < 0.7 && ref.length > 0) {
        const j = Math.floor(rand() * ref.length);
        const [victim] = ref.splice(j, 1);
        expect(q.cancel(victim?.handle ?? -1)).toBe(true);
      } else if (ref.length > 0) {
        ref.sort((a, b) => a.time - b.time || a.seq - b.seq);
        const want = ref.shift();
        expect(q.pop(out)).toBe(true);
        expect([out.time, out.arg]).toEqual([want?.time, want?.seq]);
      }
      expect(q.size).toBe(ref.length);
    }
  });
});
