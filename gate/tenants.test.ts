import { describe, expect, it } from 'vitest';
import { Harness, rule } from '../test/gate-harness.js';

function shared(outstanding: number, depth: number, pct: number): Harness {
  const h = new Harness();
  h.gate.apply(
    rule({
      fc_mode: 'enforce',
      fc_max_outstanding: outstanding,
      fc_max_queue_depth: depth,
      ...(depth > 0 ? { fc_max_queue_wait_ms: 60000 } : {}),
      fc_tenant_max_share_pct: pct,
    }),
  );
  return h;
}

/** How many a tenant may execute and then wait, probing an idle pool. */
function probe(h: Harness): [number, number | 'refused at once'] {
  let exec = 0;
  for (;;) {
    const d = h.admit({ tenant: 'a' });
    if (d.kind === 'admit') exec++;
    else if (d.kind === 'queued') break;
    else return [exec, 'refused at once'];
  }
  let wait = 1;
  while (h.admit({ tenant: 'a' }).kind === 'queued') wait++;
  return [exec, wait];
}

describe('tenant fair share', () => {
  it('answers a tenant whose share of the queue is full with Retry-After the mean queue wait, and one refused at once with 1', () => {
    const h = shared(8, 16, 25); // a tenant executes 2 and waits 4
    const a = [h.permit({ tenant: 'a' }), h.permit({ tenant: 'a' })];
    h.ticket({ tenant: 'a' });
    h.clock.advance(4200);
    a[0]!.release(); // one wait of 4200 ms
    for (let i = 0; i < 4; i++) h.ticket({ tenant: 'a' }); // 1 + 3 more: a's share of the queue is full
    const r = h.refusal({ tenant: 'a' });
    expect([r.error, r.retryAfterS]).toEqual(['admission_tenant_share', 5]);
    const atOnce = shared(10, 0, 30);
    for (let i = 0; i < 3; i++) atOnce.permit({ tenant: 'a' });
    const r0 = atOnce.refusal({ tenant: 'a' });
    expect([r0.error, r0.retryAfterS]).toEqual(['admission_tenant_share', 1]);
  });

  it.each([
    [8, 16, 25, 2, 4],
    [10, 0, 30, 3, 'refused at once'],
    [3, 1, 10, 1, 1],
  ] as const)(
    'with ceiling %i, depth %i and share %i%% lets a tenant execute %i and wait %s',
    (o, d, pct, exec, wait) => {
      expect(probe(shared(o, d, pct))).toEqual([exec, wait]);
    },
  );

  it('refuses a tenant over its share with 429 admission_tenant_share carrying the pool counts, while others admit', () => {
    const h = shared(8, 0, 25);
    h.permit({ tenant: 'a' });
    h.permit({ tenant: 'a' });
    const r = h.refusal({ tenant: 'a' });
    expect([r.status, r.error, r.reason, r.headers]).toEqual([
      429,
      'admission_tenant_share',
      'tenant_share',
      { inflight: 2, queued: 0, limit: 8 },
    ]);
    expect(h.admit({ tenant: 'b' }).kind).toBe('admit');
  });

  it('lets a flood from one tenant leave room for another', () => {
    const h = shared(8, 16, 25);
    const kinds = Array.from({ length: 10 }, () => h.admit({ tenant: 'flood' }).kind);
    expect(kinds.filter((k) => k === 'admit')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'queued')).toHaveLength(4);
    expect(h.admit({ tenant: 'quiet' }).kind).toBe('admit');
  });

  it('skips a waiting tenant at its share on release, keeping its place: no head-of-line blocking', () => {
    const h = shared(4, 16, 50);
    h.permit({ tenant: 'a' });
    h.permit({ tenant: 'a' });
    const b1 = h.permit({ tenant: 'b' });
    h.permit({ tenant: 'c' });
    h.ticket({ tenant: 'a' }, 'a-waits'); // a is at its share (2): it cannot run until one of its own ends
    h.ticket({ tenant: 'b' }, 'b-waits');
    b1.release();
    expect(h.grants.map((g) => g.ticket.context)).toEqual(['b-waits']);
    expect(h.pool.queue.head!.context).toBe('a-waits');
  });

  it('does not hold a newcomer behind a waiter that cannot run', () => {
    const h = shared(4, 16, 25);
    h.permit({ tenant: 'a' });
    h.ticket({ tenant: 'a' }, 'a-waits');
    expect(h.admit({ tenant: 'b' }).kind).toBe('admit');
  });

  it('tracks the adaptive ceiling in force', () => {
    const h = new Harness();
    h.gate.apply(
      rule({ fc_mode: 'enforce', fc_max_outstanding: 20, fc_tenant_max_share_pct: 50, fc_adaptive: 'on' }),
    );
    expect(h.pool.tenantExecBound).toBe(10);
    h.gate.reportEngine('192.0.2.10:8080/tcp', '198.51.100.11:8000', 5);
    h.clock.advance(1000);
    expect([h.pool.effective, h.pool.tenantExecBound]).toEqual([16, 8]);
  });

  it('is inert without a service ceiling', () => {
    const h = shared(0, 0, 10);
    for (let i = 0; i < 20; i++) h.permit({ tenant: 'a' });
    expect(h.gate.rules()[0]!.serviceArguments.fc_effective!.tenants_active).toBe(0);
  });

  it('treats keyless traffic as one tenant', () => {
    const h = shared(4, 0, 50);
    h.permit();
    h.permit();
    expect(h.refusal().reason).toBe('tenant_share');
  });

  it('places tenants past 64 in one shared overflow slot held to one share, counting tenant_table_full', () => {
    const h = shared(400, 0, 1); // a share of 4 units
    for (let t = 0; t < 64; t++) h.permit({ tenant: `t${t}` });
    expect(h.pool.tenants.active).toBe(64);
    for (let t = 64; t < 68; t++) h.permit({ tenant: `t${t}` });
    expect(h.refusal({ tenant: 't99' }).reason).toBe('tenant_share');
    expect(h.gate.anomalies.tenant_table_full).toBe(5);
    expect(h.pool.tenants.active).toBe(65);
  });

  it('frees a slot as soon as its tenant holds nothing, and reuses it', () => {
    const h = shared(400, 8, 1);
    const held = Array.from({ length: 64 }, (_, t) => h.permit({ tenant: `t${t}` }));
    held[0]!.release();
    expect(h.pool.tenants.active).toBe(63);
    h.permit({ tenant: 'new' });
    expect(h.gate.anomalies.tenant_table_full).toBe(0);
  });

  it('returns the slot on every exit: timeout, cancel and drain', () => {
    const h = shared(1, 8, 50);
    h.permit({ tenant: 'x' });
    const t1 = h.ticket({ tenant: 'y' });
    h.gate.cancel('192.0.2.10:8080/tcp', t1);
    h.ticket({ tenant: 'z' });
    h.clock.advance(61000);
    h.ticket({ tenant: 'w' });
    h.gate.setMaintenance(true);
    expect(h.pool.tenants.active).toBe(1);
  });

  it('settles without underflow when the share is removed under load', () => {
    const h = shared(4, 8, 50);
    const a = h.permit({ tenant: 'a' });
    h.gate.apply(rule({ fc_tenant_max_share_pct: 100 }));
    a.release();
    h.gate.apply(rule({ fc_tenant_max_share_pct: 50 }));
    expect(h.gate.anomalies.underflow).toBe(0);
    expect(h.pool.tenants.active).toBe(0);
  });
});
