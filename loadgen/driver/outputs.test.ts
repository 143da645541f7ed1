/**
 * The driver's outputs are the simulator's: the same record, row and summary keys, the same CSV
 * columns; and a library scenario, scaled down, runs end to end through `sluice load`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCommand } from '../../cli/load.js';
import { REQUEST_COLUMNS, type RunSummary } from '../../sim/run/records.js';
import { runScenario } from '../../sim/run/run.js';
import { MemorySink, secondColumns } from '../../sim/run/sinks.js';
import { loadScenario } from '../../sim/scenario/load.js';
import { type Backend, startBackend } from './test/backend.js';
import { run, setupOf } from './test/helpers.js';

let backend: Backend | undefined;
let dir: string | undefined;
afterEach(async () => {
  await backend?.close();
  backend = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  vi.restoreAllMocks();
});

/** Key paths of a JSON value (arrays by their first element). */
function shape(v: unknown, path = ''): string[] {
  if (Array.isArray(v)) return v.length === 0 ? [`${path}[]`] : shape(v[0], `${path}[]`);
  if (v !== null && typeof v === 'object')
    return Object.keys(v)
      .sort()
      .flatMap((k) => [`${path}.${k}`, ...shape((v as Record<string, unknown>)[k], `${path}.${k}`)]);
  return [];
}

describe('outputs in the simulator formats', () => {
  it('records, rows and summary have the simulator keys', async () => {
    const scenario = await loadScenario('scenarios/noisy-tenant.yaml');
    const simSink = new MemorySink(true);
    await runScenario({ ...scenario, duration_s: 3, warmup_s: 1 }, { sink: simSink });
    backend = await startBackend();
    const r = await run(
      backend.url,
      setupOf({
        arrival: { kind: 'constant', ratePerSec: 20, durationMs: 900 },
        tenants: [{ id: 'a' }, { id: 'b' }],
        apiKeys: { a: 'k' },
      }),
      1000,
      { graceMs: 300 },
    );
    const simRec = simSink.requests[0]!;
    const realRec = r.sink.requests[0]!;
    expect(Object.keys(realRec)).toEqual(Object.keys(simRec));
    expect(Object.keys(realRec)).toEqual([...REQUEST_COLUMNS]);
    for (const k of REQUEST_COLUMNS) {
      const sv = simRec[k];
      const rv = realRec[k];
      if (sv !== '' && rv !== '') expect([k, typeof rv]).toEqual([k, typeof sv]);
    }
    const simRow = simSink.seconds[0]!;
    const realRow = r.sink.seconds[0]!;
    expect(Object.keys(realRow)).toEqual(Object.keys(simRow));
    expect(r.sink.seconds.map((s) => s.t_s)).toEqual([1]);
    const simSummary = simSink.summary as RunSummary;
    const topKeys = (s: RunSummary) => Object.keys(s);
    expect(topKeys(r.summary)).toEqual(topKeys(simSummary));
    const stable = (s: RunSummary) => shape({ ...s, anomalies: {}, decisions: {}, sheds: {}, outcomes: {} });
    expect(stable(r.summary)).toEqual(stable(simSummary));
    expect(Object.keys(r.summary.outcomes)).toEqual(Object.keys(simSummary.outcomes));
    expect(Object.keys(r.summary.decisions)).toEqual(Object.keys(simSummary.decisions));
    expect(r.summary.conservation_ok).toBe(true);
  });

  it('runs a library scenario end to end through `sluice load` (scaled down)', async () => {
    backend = await startBackend();
    dir = mkdtempSync(join(tmpdir(), 'sluice-load-'));
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      out.push(String(s));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await loadCommand().parseAsync(
      [
        '--target',
        backend.url,
        '--scenario',
        'scenarios/http2-mix.yaml',
        '--duration-scale',
        '0.02',
        '--out',
        dir,
        '--json',
        '--grace-s',
        '1',
        // The outputs are under test, not the driver's lateness on a loaded machine (exit 3 otherwise).
        '--max-late-share',
        '1',
      ],
      { from: 'user' },
    );
    expect(process.exitCode ?? 0).toBe(0);
    const printed = JSON.parse(out.join('')) as RunSummary;
    const saved = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    expect(saved).toEqual(printed);
    expect(saved.scenario).toBe('http2-mix');
    expect(saved.duration_s).toBeCloseTo(2.4);
    expect(saved.ceilings).toEqual({ max_outstanding: 256, queue_depth: 128, queue_wait_ms: 5000 });
    // 40 req/s over 2.4 s with the first 0.2 s as warm-up.
    expect(saved.offered).toBeGreaterThan(55);
    expect(saved.offered).toBeLessThan(130);
    expect(saved.completed).toBeGreaterThan(saved.offered * 0.8);
    expect(saved.conservation_ok).toBe(true);
    const csv = readFileSync(join(dir, 'requests.csv'), 'utf8').split('\n');
    expect(csv[0]).toBe(REQUEST_COLUMNS.join(','));
    expect(csv.length).toBeGreaterThan(saved.attempts);
    const ts = readFileSync(join(dir, 'timeseries.csv'), 'utf8').split('\n');
    expect(ts[0]).toBe(secondColumns([]).join(','));
    expect(ts.filter((l) => l !== '').length).toBe(1 + 3);
    const extras = JSON.parse(readFileSync(join(dir, 'load.json'), 'utf8')) as {
      protocols: { http1: number; h2: number };
      schedule: { sends: number };
    };
    expect(extras.protocols.h2).toBeGreaterThan(10);
    expect(extras.protocols.http1).toBeGreaterThan(10);
    const versions = new Set(backend.seen.map((s) => s.httpVersion));
    expect(versions).toEqual(new Set(['1.1', '2.0']));
    expect(backend.seen.some((s) => s.path === '/v1/models')).toBe(true);
  });
});
