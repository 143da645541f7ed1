import { describe, expect, it } from 'vitest';
import { Harness, KEY, rule } from '../test/gate-harness.js';
import { REASON_INDEX } from './decisions.js';

function gated(fc: Record<string, unknown> = {}): Harness {
  const h = new Harness();
  h.gate.apply(
    rule({
      fc_mode: 'enforce',
      fc_max_outstanding: 2,
      fc_max_queue_depth: 3,
      fc_max_queue_wait_ms: 5000,
      ...fc,
    }),
  );
  return h;
}

describe('the bounded queue', () => {
  it('parks an HTTP/1.1 request over the ceiling and hands it the next released unit', () => {
    const h = gated();
    const a = h.permit();
    h.permit();
    const t = h.ticket({}, 'w');
    expect(h.pool.queue.length).toBe(1);
    h.clock.advance(120);
    a.release();
    expect(h.grants).toHaveLength(1);
    expect(h.grants[0]!.ticket).toBe(t);
    expect(h.pool.inflight).toBe(2);
    expect(h.pool.queueWaitSumMs).toBe(120);
    expect(h.count('admitted')).toBe(3);
    expect(h.count('queued')).toBe(1);
  });

  it('hands units to waiters in arrival order', () => {
    const h = gated();
    const running = [h.permit(), h.permit()];
    h.ticket({}, 1);
    h.ticket({}, 2);
    h.ticket({}, 3);
    running[0]!.release();
    running[1]!.release();
    h.grants[0]!.permit.release();
    expect(h.grants.map((g) => g.ticket.context)).toEqual([1, 2, 3]);
  });

  it('never lets a newcomer jump a non-empty queue, even with a unit free', () => {
    const h = gated();
    const a = h.permit();
    h.permit();
    h.ticket({}, 'old');
    h.answers.push('lost');
    a.release(); // the turn is lost: a unit is free and 'old' is back at the head
    expect(h.pool.inflight).toBe(1);
    const d = h.admit({}, 'new');
    expect(d.kind).toBe('queued');
    expect(h.pool.queue.toArray().map((w) => w.context)).toEqual(['old', 'new']);
    h.clock.advance(1000);
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['old']);
  });

  it('refuses HTTP/2 streams over the ceiling on their own stream; they never wait', () => {
    const h = gated();
    h.permit();
    h.permit();
    const r = h.refusal({ protocol: 'h2' });
    expect([r.status, r.error, r.reason]).toEqual([429, 'admission_capacity', 'capacity_shed']);
    expect(h.pool.queue.length).toBe(0);
  });

  it('refuses an HTTP/2 stream whenever anyone is queued', () => {
    const h = gated();
    h.permit();
    const b = h.permit();
    h.ticket();
    h.answers.push('lost');
    b.release();
    expect(h.pool.inflight).toBe(1);
    expect(h.refusal({ protocol: 'h2' }).reason).toBe('capacity_shed');
  });

  it('refuses 429 admission_capacity counted queue_full once the queue holds its depth', () => {
    const h = gated();
    h.permit();
    h.permit();
    h.ticket();
    h.ticket();
    h.ticket();
    const r = h.refusal();
    expect([r.status, r.error, r.reason]).toEqual([429, 'admission_capacity', 'queue_full']);
    expect(r.headers).toEqual({ inflight: 2, queued: 3, limit: 2 });
    expect(h.count('queue_full')).toBe(1);
  });

  it('ends a waiter at its deadline exactly with 504 admission_queue_timeout carrying the queued_ms it waited', () => {
    const h = gated({ fc_max_queue_wait_ms: 2500 });
    h.permit();
    h.permit();
    h.clock.advance(200);
    h.ticket({}, 'w');
    h.clock.advance(2499); // t=2699: one ms before its deadline 2700
    expect(h.endings).toHaveLength(0);
    h.clock.advance(1); // t=2700
    expect(h.endings).toHaveLength(1);
    const e = h.endings[0]!;
    expect([e.refusal.status, e.refusal.error, e.refusal.queuedMs, e.atMs]).toEqual([
      504,
      'admission_queue_timeout',
      2500,
      2700,
    ]);
    expect(e.refusal.keepConnection).toBe(false);
    expect(h.count('queue_timeout')).toBe(1);
  });

  it("frees a timed-out waiter's queue slot at its deadline: a newcomer at that instant is queued, not refused", () => {
    const h = gated({ fc_max_queue_depth: 1, fc_max_queue_wait_ms: 1001 });
    h.permit();
    h.permit();
    h.ticket({}, 'first');
    h.clock.advance(1000);
    expect(h.refusal().reason).toBe('queue_full'); // t=1000: still waiting
    h.clock.advance(1); // t=1001: its window is over
    expect(h.endings.map((e) => [e.ticket.context, e.atMs])).toEqual([['first', 1001]]);
    expect(h.admit({}, 'second').kind).toBe('queued');
  });

  it('ends each waiter at its own deadline, in deadline order, when a replace shortened the window', () => {
    const h = gated({ fc_max_queue_wait_ms: 3000 });
    h.permit();
    h.permit();
    h.ticket({}, 'long'); // deadline 3000
    h.clock.advance(100);
    h.gate.apply(rule({ fc_max_queue_wait_ms: 500 }));
    h.ticket({}, 'short'); // deadline 600, behind an older waiter with a later deadline
    h.clock.advance(5000);
    expect(h.endings.map((e) => [e.ticket.context, e.atMs, e.refusal.queuedMs])).toEqual([
      ['short', 600, 500],
      ['long', 3000, 3000],
    ]);
  });

  it('ends a woken waiter that lost its turn at the deadline it was first parked with', () => {
    const h = gated({ fc_max_queue_wait_ms: 1500 });
    const a = h.permit();
    h.permit();
    h.ticket({}, 'w'); // deadline 1500
    h.clock.advance(400);
    h.answers.push('lost', 'lost');
    a.release(); // t=400: its turn, lost; back at the head
    h.clock.advance(1100); // the sweep at 1000 hands it a turn again, lost again
    expect(h.endings.map((e) => [e.ticket.context, e.atMs, e.refusal.queuedMs])).toEqual([['w', 1500, 1500]]);
  });

  it('asks the clock for one deadline timer per pool, however many wait', () => {
    const h = gated({ fc_max_queue_depth: 500 });
    const before = h.clock.pendingTimers; // the sweep
    h.permit();
    h.permit();
    for (let i = 0; i < 400; i++) {
      h.ticket({}, i);
      h.clock.advance(3);
    }
    expect(h.clock.pendingTimers).toBe(before + 1);
    h.clock.advance(5000);
    expect(h.endings).toHaveLength(400);
    expect(h.endings.every((e) => e.atMs === (e.ticket.context as number) * 3 + 5000)).toBe(true);
  });

  it('stops the deadline timer of a deleted pool: its waiters end drained, never timed out later', () => {
    const h = gated({ fc_max_queue_wait_ms: 800 });
    h.permit();
    h.permit();
    h.ticket({}, 'w');
    const pool = h.pool;
    h.gate.delete(KEY);
    h.clock.advance(2000);
    expect(h.endings.map((e) => e.refusal.error)).toEqual(['admission_drained']);
    expect(pool.decisions[REASON_INDEX.queue_timeout]).toBe(0);
  });

  it('never admits a waiter after its deadline: a release past it ends the wait instead', () => {
    const h = gated({ fc_max_queue_wait_ms: 500 });
    const a = h.permit();
    h.permit();
    h.ticket({}, 'late');
    h.clock.advance(600); // no sweep yet at 600 ms
    a.release();
    expect(h.grants).toHaveLength(0);
    expect(h.endings.map((e) => e.refusal.error)).toEqual(['admission_queue_timeout']);
    expect(h.pool.inflight).toBe(1);
  });

  it('returns a woken waiter that lost its turn to the head with its first deadline, and retries at the sweep', () => {
    const h = gated({ fc_max_queue_wait_ms: 3000 });
    const a = h.permit();
    h.permit();
    const first = h.ticket({}, 'first');
    h.clock.advance(100);
    h.ticket({}, 'second');
    h.answers.push('lost');
    a.release();
    expect(h.pool.queue.head!.context).toBe('first');
    expect(h.pool.inflight).toBe(1);
    expect(first.deadlineMs).toBe(3000);
    h.clock.advance(900); // the sweep at 1000 wakes the head into the free unit
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['first']);
  });

  it('lets a returning loser exceed the depth rather than lose its place', () => {
    const h = gated({ fc_max_queue_depth: 1 });
    const a = h.permit();
    h.permit();
    h.ticket({}, 'loser');
    h.answers.push('lost');
    h.onGrant = () => {
      h.onGrant = null;
      expect(h.ticket({}, 'newcomer').context).toBe('newcomer'); // the queue was empty for a moment
    };
    a.release();
    expect(h.pool.queue.toArray().map((w) => w.context)).toEqual(['loser', 'newcomer']);
    expect(h.pool.queue.length).toBe(2);
  });

  it('passes the turn of a client that has gone to the next waiter', () => {
    const h = gated();
    const a = h.permit();
    h.permit();
    h.ticket({}, 'gone');
    h.ticket({}, 'next');
    h.answers.push('gone');
    a.release();
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['next']);
    expect(h.count('cancelled')).toBe(1);
    expect(h.pool.inflight).toBe(2);
  });

  it('removes a cancelled waiter at once, counts it once, and never wakes it', () => {
    const h = gated();
    const a = h.permit();
    h.permit();
    const t = h.ticket({}, 'x');
    h.ticket({}, 'y');
    h.gate.cancel('192.0.2.10:8080/tcp', t);
    h.gate.cancel('192.0.2.10:8080/tcp', t);
    expect(h.count('cancelled')).toBe(1);
    expect(h.pool.queue.length).toBe(1);
    a.release();
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['y']);
  });

  it('refuses over the ceiling at once with depth 0', () => {
    const h = gated({ fc_max_queue_depth: 0, fc_max_queue_wait_ms: 0 });
    h.permit();
    h.permit();
    const r = h.refusal();
    expect([r.reason, r.retryAfterS, r.keepConnection]).toEqual(['capacity_shed', 1, true]);
  });

  it('keeps waiters when the depth shrinks below the live count and refuses newcomers until it falls', () => {
    const h = gated();
    const a = h.permit();
    h.permit();
    h.ticket({}, 1);
    h.ticket({}, 2);
    h.ticket({}, 3);
    h.gate.apply(rule({ fc_max_queue_depth: 1 }));
    expect(h.pool.queue.length).toBe(3);
    expect(h.refusal().reason).toBe('queue_full');
    a.release();
    expect(h.grants.map((g) => g.ticket.context)).toEqual([1]);
  });

  it('sets Retry-After to the mean queue wait, clamped to [1, 30] s, for a full queue or a timeout', () => {
    const h = gated({ fc_max_queue_depth: 1, fc_max_queue_wait_ms: 60_000 });
    const a = h.permit();
    const b = h.permit();
    h.ticket();
    h.clock.advance(900);
    a.release(); // one wait of 900 ms
    h.ticket();
    expect(h.refusal().retryAfterS).toBe(1);
    h.clock.advance(45_000);
    b.release(); // waits 900 and 45000: mean 22950 ms
    h.ticket();
    expect(h.refusal().retryAfterS).toBe(23);
    h.clock.advance(59_999);
    h.grants[0]!.permit.release(); // a third wait of 59999 ms: mean 35300, clamped
    h.ticket();
    const r = h.refusal();
    expect([r.retryAfterS, r.jitterHintMs]).toEqual([30, 15_000]);
  });

  it('counts timed-out waits in the mean: a 504 after 9 s where nobody was admitted from the queue advertises 9 s', () => {
    const h = gated({ fc_max_queue_depth: 1, fc_max_queue_wait_ms: 9000 });
    h.permit();
    h.permit();
    h.ticket();
    expect(h.refusal().retryAfterS).toBe(1); // nobody has left the queue yet
    h.clock.advance(9000);
    const e = h.endings[0]!.refusal;
    expect([e.status, e.queuedMs, e.retryAfterS]).toEqual([504, 9000, 9]);
    h.ticket();
    expect(h.refusal().retryAfterS).toBe(9); // the next full-queue refusal too
  });

  it('takes the mean over the last 64 waits only, so an old slow spell does not linger', () => {
    const h = gated({ fc_max_queue_depth: 1, fc_max_queue_wait_ms: 60_000, fc_max_outstanding: 1 });
    let running = h.permit();
    const wait = (ms: number): void => {
      h.ticket();
      h.clock.advance(ms);
      running.release();
      running = h.grants.at(-1)!.permit;
    };
    wait(20_000);
    for (let i = 0; i < 64; i++) wait(100);
    h.ticket();
    expect(h.refusal().retryAfterS).toBe(1);
  });

  it('closes the connection after a 429 when the body was streamed, keeps it when buffered', () => {
    const h = gated({ fc_max_queue_depth: 0, fc_max_queue_wait_ms: 0 });
    h.permit();
    h.permit();
    expect(h.refusal({ bodyBuffered: true }).keepConnection).toBe(true);
    expect(h.refusal({ bodyBuffered: false }).keepConnection).toBe(false);
  });
});
