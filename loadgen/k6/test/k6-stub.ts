/**
 * Stand-ins for k6's modules, so the bundled cliff script can run under Node in a test: an esbuild
 * plugin resolves every `k6` import to a module reading `globalThis.__k6`, and a tiny metrics
 * store aggregates samples into the end-of-test data shape (with submetrics for tag-filtered
 * threshold keys) that `handleSummary` receives from k6.
 */
import type { Plugin } from 'esbuild';

/** One metric sample. */
interface Sample {
  value: number;
  tags: Record<string, string>;
}

/** The stubbed k6 runtime. */
export interface K6Stub {
  samples: Map<string, { type: string; samples: Sample[] }>;
  sleeps: number[];
  requests: {
    method: string;
    url: string;
    body: string | null;
    params: { headers: Record<string, string> };
  }[];
  exec: { scenario: { iterationInTest: number; startTime: number } };
  respond: (
    req: K6Stub['requests'][number],
    n: number,
  ) => { status: number; headers: Record<string, string>; body: string };
}

/** esbuild plugin: every `k6` / `k6/*` import reads from `globalThis.__k6`. */
export const k6StubPlugin: Plugin = {
  name: 'k6-stub',
  setup(b) {
    b.onResolve({ filter: /^k6(\/.*)?$/ }, (a) => ({ path: a.path, namespace: 'k6stub' }));
    b.onLoad({ filter: /.*/, namespace: 'k6stub' }, (a) => {
      const src: Record<string, string> = {
        k6: 'export const sleep = (s) => globalThis.__k6.sleep(s);',
        'k6/data': 'export const SharedArray = globalThis.__k6.SharedArray;',
        'k6/execution': 'export default globalThis.__k6.exec;',
        'k6/http': 'export default globalThis.__k6.http;',
        'k6/metrics':
          'const k = globalThis.__k6; export const Counter = k.Counter; export const Gauge = k.Gauge; export const Rate = k.Rate; export const Trend = k.Trend;',
      };
      return { contents: src[a.path] ?? 'export {}', loader: 'js' };
    });
  },
};

/** Installs the stub runtime on globalThis and returns it. */
export function installK6Stub(respond: K6Stub['respond']): K6Stub {
  const stub: K6Stub = {
    samples: new Map(),
    sleeps: [],
    requests: [],
    exec: { scenario: { iterationInTest: 0, startTime: 0 } },
    respond,
  };
  const metric = (type: string) =>
    class {
      readonly name: string;
      constructor(name: string) {
        this.name = name;
        stub.samples.set(name, { type, samples: [] });
      }
      add(v: number | boolean, tags: Record<string, string> = {}) {
        stub.samples.get(this.name)!.samples.push({ value: Number(v), tags });
      }
    };
  (globalThis as Record<string, unknown>).__k6 = {
    sleep: (s: number) => stub.sleeps.push(s),
    SharedArray: class {
      constructor(_name: string, fn: () => unknown[]) {
        // biome-ignore lint/correctness/noConstructorReturn: SharedArray returns the array
        return fn();
      }
    },
    exec: stub.exec,
    http: {
      request(method: string, url: string, body: string | null, params: { headers: Record<string, string> }) {
        const req = { method, url, body, params };
        stub.requests.push(req);
        const r = stub.respond(req, stub.requests.length);
        return { ...r, error_code: 0, timings: { receiving: 2 } };
      },
    },
    Counter: metric('counter'),
    Gauge: metric('gauge'),
    Rate: metric('rate'),
    Trend: metric('trend'),
  };
  return stub;
}

/** The end-of-test data k6 would hand to handleSummary, for the metrics and threshold keys. */
export function summaryData(stub: K6Stub, thresholdKeys: readonly string[]) {
  const metrics: Record<string, { type: string; values: Record<string, number> }> = {};
  const agg = (type: string, xs: number[]): Record<string, number> => {
    const sorted = [...xs].sort((a, b) => a - b);
    const q = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? 0;
    const sum = xs.reduce((a, b) => a + b, 0);
    if (type === 'counter') return { count: sum, rate: 0 };
    if (type === 'rate') {
      const passes = xs.filter((x) => x !== 0).length;
      return { rate: xs.length ? passes / xs.length : 0, passes, fails: xs.length - passes };
    }
    if (type === 'gauge') return { value: xs.at(-1) ?? 0, min: sorted[0] ?? 0, max: sorted.at(-1) ?? 0 };
    return {
      avg: xs.length ? sum / xs.length : 0,
      min: sorted[0] ?? 0,
      med: q(0.5),
      max: sorted.at(-1) ?? 0,
      'p(95)': q(0.95),
      'p(99)': q(0.99),
      count: xs.length,
    };
  };
  for (const [name, m] of stub.samples)
    metrics[name] = {
      type: m.type,
      values: agg(
        m.type,
        m.samples.map((s) => s.value),
      ),
    };
  for (const key of thresholdKeys) {
    const m = /^([^{]+)\{([^:]+):(.*)\}$/.exec(key);
    if (m === null) continue;
    const [, name, tag, value] = m as unknown as [string, string, string, string];
    const base = stub.samples.get(name);
    if (base === undefined) continue;
    const xs = base.samples.filter((s) => s.tags[tag] === value).map((s) => s.value);
    metrics[key] = { type: base.type, values: agg(base.type, xs) };
  }
  metrics.iterations = { type: 'counter', values: { count: stub.exec.scenario.iterationInTest + 1 } };
  metrics.dropped_iterations = { type: 'counter', values: { count: 0 } };
  return { metrics };
}
