import { describe, expect, it } from 'vitest';
import { Deque } from './deque.js';

describe('Deque', () => {
  it('pushes and pops at both ends across growth and wrap-around', () => {
    const d = new Deque<number>();
    for (let i = 0; i < 20; i++) d.pushBack(i);
    for (let i = 0; i < 5; i++) d.popFront();
    for (let i = 1; i <= 3; i++) d.pushFront(-i);
    expect(d.length).toBe(18);
    expect(d.toArray()).toEqual([-3, -2, -1, ...Array.from({ length: 15 }, (_, i) => i + 5)]);
    expect(d.peekFront()).toBe(-3);
  });

  it('removes an item from the middle and keeps the order', () => {
    const d = new Deque<string>();
    for (const s of ['a', 'b', 'c', 'd']) d.pushBack(s);
    d.popFront();
    d.pushBack('e');
    expect(d.remove('c')).toBe(true);
    expect(d.remove('zz')).toBe(false);
    expect(d.toArray()).toEqual(['b', 'd', 'e']);
    expect(d.popFront()).toBe('b');
  });
});
