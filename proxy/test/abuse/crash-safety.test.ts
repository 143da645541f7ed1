/**
 * No request may crash the process. A dependency of the request handler is
 * injected that throws on demand (the rule's dialect, on the synchronous
 * path of an admitted request, on a waiter's turn, and inside the async P/D
 * path): that request alone is failed 500 `internal_error`, the error is
 * reported, its unit is released, and the next request is served. The
 * process-level guard that `sluice proxy` installs logs an escaped error
 * and keeps the process up.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, test } from 'vitest';
import { collect, Gate, parseRule, renderPrometheus } from '../../../gate/index.js';
import { AcceptValve } from '../../accept-valve.js';
import { BackendPools } from '../../backend-pools.js';
import { BodyBudget } from '../../body-budget.js';
import { RealClock } from '../../clock.js';
import { installCrashGuard } from '../../crash-guard.js';
import { exchangeHost, RequestHandler } from '../../handler.js';
import { ServiceListener } from '../../listener.js';
import { RuleDialect } from '../../rule-dialect.js';
import { freePort, infer, metricSum, rule, TestBackend, until } from '../helpers.js';

/** A rule dialect whose endpoint lookup throws while `failing` is set (the fault injected by the test). */
class FaultyDialect extends RuleDialect {
  failing = false;
  override target(id: string) {
    if (this.failing) throw new Error('injected fault');
    return super.target(id);
  }
}

interface Rig {
  port: number;
  dialect: FaultyDialect;
  errors: unknown[];
  inflight(): number;
  queued(): number;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** A gate, a handler with the faulty dialect and a listener, over `backends`, as LoxiProxy wires them. */
async function rig(r: ReturnType<typeof rule> | Record<string, unknown>): Promise<Rig> {
  const clock = new RealClock(1);
  const gate = new Gate({ clock, host: exchangeHost, env: {}, dataPathAttached: true, nodeMemoryMib: 1024 });
  gate.apply(r);
  const parsed = parseRule(r);
  const dialect = new FaultyDialect(gate, parsed, {}, () => true);
  const valve = new AcceptValve(0);
  const pools = new BackendPools(valve);
  const errors: unknown[] = [];
  const handler = new RequestHandler(dialect, {
    clock,
    pools,
    log: null,
    legs: null,
    bufferBodyBytes: 64 * 1024,
    maxBodyBytes: 1024 * 1024,
    maxJsonDepth: 64,
    bodyTimeoutMs: 30_000,
    bodyBudget: new BodyBudget(0),
    onInternalError: (err) => errors.push(err),
  });
  const listener = new ServiceListener({
    host: '127.0.0.1',
    port: parsed.port,
    valve,
    headersTimeoutMs: 5_000,
    keepAliveTimeoutMs: 5_000,
    maxHeaderBytes: 16 * 1024,
    checkIntervalMs: 1_000,
    onRequest: (q, s, pr) => handler.handle(q, s, pr),
    onFault: () => {},
  });
  await listener.listen();
  const metric = (name: string, f?: (l: string) => boolean) =>
    metricSum(renderPrometheus(collect(gate)), name, f) ?? 0;
  const close = async () => {
    listener.destroy();
    gate.dispose();
    clock.dispose();
    await pools.destroy();
  };
  cleanups.push(close);
  return {
    port: parsed.port,
    dialect,
    errors,
    inflight: () => metric('loxilb_ai_admission_inflight', (l) => l.includes('role="service"')),
    queued: () => metric('loxilb_ai_admission_queued'),
    close,
  };
}

describe('a fault inside one exchange', () => {
  test('thrown on the synchronous path of an admitted request: 500 internal_error, unit released, next served', async () => {
    const b = await new TestBackend('b').start();
    cleanups.push(() => b.stop());
    const g = await rig(rule(await freePort(), { fc_mode: 'enforce', fc_max_outstanding: 2 }, [b]));
    g.dialect.failing = true;
    const r = await infer(g.port, { hold: 1 });
    expect(r.status).toBe(500);
    expect(JSON.parse(r.body).error).toBe('internal_error');
    expect(r.headers.connection).toBe('close');
    expect(g.errors).toHaveLength(1);
    expect(await until(() => g.inflight() === 0, 3_000)).toBe(true);
    g.dialect.failing = false;
    expect((await infer(g.port, { hold: 1 })).status).toBe(200);
  });

  test("thrown when a waiter's turn comes: the waiter alone fails 500; the turn is not lost", async () => {
    const b = await new TestBackend('b').start();
    cleanups.push(() => b.stop());
    const g = await rig(
      rule(
        await freePort(),
        { fc_mode: 'enforce', fc_max_outstanding: 1, fc_max_queue_depth: 4, fc_max_queue_wait_ms: 5_000 },
        [b],
      ),
    );
    const busy = infer(g.port, { hold: 300 });
    expect(await until(() => g.inflight() === 1, 3_000)).toBe(true);
    const waiter = infer(g.port, { hold: 1 });
    expect(await until(() => g.queued() === 1, 3_000)).toBe(true);
    // The busy request's leg already found its endpoint; the waiter's lookup will throw.
    g.dialect.failing = true;
    expect((await busy).status).toBe(200);
    const w = await waiter;
    expect(w.status).toBe(500);
    expect(JSON.parse(w.body).error).toBe('internal_error');
    expect(await until(() => g.inflight() === 0 && g.queued() === 0, 3_000)).toBe(true);
    g.dialect.failing = false;
    expect((await infer(g.port, { hold: 1 })).status).toBe(200);
  });

  test('thrown inside the async P/D path (an un-awaited promise before): 500, unit released, next served', async () => {
    const pre = await new TestBackend('pre').start();
    const dec = await new TestBackend('dec').start();
    cleanups.push(
      () => pre.stop(),
      () => dec.stop(),
    );
    const port = await freePort();
    const g = await rig({
      serviceArguments: {
        externalIP: '127.0.0.1',
        port,
        protocol: 'tcp',
        mode: 4,
        pd_disagg_mode: true,
        fc_mode: 'enforce',
        fc_max_outstanding: 2,
      },
      endpoints: [
        { endpointIP: '127.0.0.1', targetPort: pre.port, weight: 1, role: 'prefill' },
        { endpointIP: '127.0.0.1', targetPort: dec.port, weight: 1, role: 'decode' },
      ],
    });
    g.dialect.failing = true;
    const r = await infer(g.port, { hold: 1 });
    expect(r.status).toBe(500);
    expect(JSON.parse(r.body).error).toBe('internal_error');
    expect(g.errors.map((e) => (e as Error).message)).toEqual(['injected fault']);
    expect(await until(() => g.inflight() === 0, 3_000)).toBe(true);
    g.dialect.failing = false;
    expect((await infer(g.port, { hold: 1 })).status).toBe(200);
  });
});

describe('the process-level guard', () => {
  test('an uncaught exception and an unhandled rejection are logged as JSON lines and counted; nothing exits', () => {
    const source = new EventEmitter();
    const lines: string[] = [];
    let count = 0;
    installCrashGuard(
      source,
      (l) => lines.push(l),
      () => count++,
    );
    source.emit('uncaughtException', new RangeError('Maximum call stack size exceeded'));
    source.emit('unhandledRejection', 'a string reason');
    expect(count).toBe(2);
    const parsed = lines.map((l) => JSON.parse(l.replace(/^sluice proxy: /, '')));
    expect(parsed[0]).toMatchObject({
      event: 'uncaught_exception',
      error: 'RangeError: Maximum call stack size exceeded',
    });
    expect(parsed[1]).toMatchObject({ event: 'unhandled_rejection', error: 'Error: a string reason' });
  });

  test('a log that throws does not make the guard throw', () => {
    const source = new EventEmitter();
    installCrashGuard(source, () => {
      throw new Error('log down');
    });
    expect(() => source.emit('uncaughtException', new Error('x'))).not.toThrow();
  });
});
