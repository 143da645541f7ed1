/**
 * The k6 scripts build: they type-check against @types/k6 (their own tsconfig), esbuild bundles
 * them into one ESM file importing only k6 modules with the shared logic inlined, and the bundle
 * runs under stubbed k6 modules (k6 itself cannot run here): tenants' keys sent, a 429 retried
 * after Retry-After plus jitter, goodput recorded, handleSummary writing the simulator's shape.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../sim/run/records.js';
import { bundleK6, REPO_ROOT } from '../driver/k6-bundle.js';
import { buildK6Plan, type K6Plan } from '../shared/plan.js';
import { installK6Stub, k6StubPlugin, summaryData } from './test/k6-stub.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-k6-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('k6 scripts', () => {
  it('type-check with @types/k6', () => {
    const out = execFileSync(join(REPO_ROOT, 'node_modules/.bin/tsc'), ['-p', 'loadgen/k6/tsconfig.json'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(out).toBe('');
  });

  it('bundle into one ESM file that imports only k6 and inlines the shared logic', async () => {
    const { outfile, warnings } = await bundleK6('cliff', join(dir, 'cliff.js'));
    expect(warnings).toEqual([]);
    const js = readFileSync(outfile, 'utf8');
    const specifiers = [...js.matchAll(/^import\s[^;]*?from\s*"([^"]+)";?$/gm)].map((m) => m[1]);
    expect(new Set(specifiers)).toEqual(new Set(['k6', 'k6/data', 'k6/execution', 'k6/http', 'k6/metrics']));
    expect(js).not.toMatch(/\brequire\(|["']node:/);
    for (const inlined of [
      'function classifyAttempt(',
      'function buildRequest(',
      'function completionFacts(',
      'var SseParser = class',
      'function summaryFromK6(',
      'function createRetryPolicy(',
      'function k6Options(',
    ])
      expect(js).toContain(inlined);
    expect(js).toMatch(/export\s*\{[^}]*\bcliff\b[^}]*\}/);
    expect(js).toMatch(/export\s*\{[^}]*\bhandleSummary\b[^}]*\}/);
    expect(js).toMatch(/export\s*\{[^}]*\boptions\b[^}]*\}/);
  });

  it('run under stubbed k6 modules', async () => {
    const plan: K6Plan = buildK6Plan(
      {
        workload: {
          arrival: { kind: 'constant', ratePerSec: 5, durationMs: 1000 },
          tenants: [{ id: 'a' }, { id: 'b' }],
          outputTokens: { kind: 'fixed', value: 4 },
          deadlineMs: 30_000,
          ttftSloMs: 5000,
        },
        retry: { kind: 'honour' },
        apiKeys: { a: 'sk-a', b: 'sk-b' },
        shifts: [],
      },
      {
        scenario: 'stub',
        seed: 1,
        durationScale: 1,
        endMs: 60_000,
        warmupMs: 0,
        dialect: 'loxilb',
        ceilings: { max_outstanding: 8, queue_depth: 4, queue_wait_ms: 1000 },
      },
    );
    const planFile = join(dir, 'plan.json');
    writeFileSync(planFile, JSON.stringify(plan));
    const out = join(dir, 'stubbed.mjs');
    await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: ['loadgen/k6/cliff.ts'],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      target: 'es2020',
      outfile: out,
      plugins: [k6StubPlugin],
      logLevel: 'silent',
    });
    const stub = installK6Stub((req, n) => {
      if (n === 1)
        return {
          status: 429,
          headers: { 'Retry-After': '1' },
          body: JSON.stringify({ error: 'admission_capacity', retry_after: 1, jitter_hint_ms: 500 }),
        };
      const max = (JSON.parse(req.body ?? '{}') as { max_tokens: number }).max_tokens;
      const tok = 'data: {"choices":[{"delta":{"content":"x"}}]}\n\n'.repeat(max);
      return {
        status: 200,
        headers: { 'Content-Type': 'text/event-stream', 'X-Loxilb-Admission-Inflight': '2' },
        body: `${tok}data: {"choices":[],"usage":{"completion_tokens":${max}}}\n\ndata: [DONE]\n\n`,
      };
    });
    const g = globalThis as Record<string, unknown>;
    g.__ENV = { SLUICE_PLAN: planFile, TARGET: 'http://gate.test:8080/' };
    g.open = (p: string) => readFileSync(p, 'utf8');
    stub.exec.scenario.startTime = Date.now();
    const mod = (await import(pathToFileURL(out).href)) as {
      options: {
        scenarios: { cliff: { executor: string; stages: unknown[] } };
        thresholds: Record<string, unknown>;
      };
      cliff: () => void;
      handleSummary: (d: unknown) => Record<string, string>;
    };
    expect(mod.options.scenarios.cliff.executor).toBe('ramping-arrival-rate');
    expect(mod.options.scenarios.cliff.stages.length).toBeGreaterThan(1);
    for (let i = 0; i < plan.requests.length; i++) {
      stub.exec.scenario.iterationInTest = i;
      mod.cliff();
    }
    expect(stub.requests).toHaveLength(plan.requests.length + 1);
    expect(stub.sleeps).toHaveLength(1);
    expect(stub.sleeps[0]).toBeGreaterThanOrEqual(1);
    expect(stub.sleeps[0]).toBeLessThan(1.5);
    for (const [k, r] of stub.requests.entries()) {
      const planned = plan.requests[k === 0 ? 0 : k - 1]!;
      expect(r.url).toBe('http://gate.test:8080/v1/chat/completions');
      expect(r.params.headers.authorization).toBe(`Bearer sk-${planned.tenant}`);
    }
    const files = mod.handleSummary(summaryData(stub, Object.keys(mod.options.thresholds)));
    const summary = JSON.parse(files['summary.json']!) as RunSummary;
    expect(summary).toMatchObject({
      scenario: 'stub',
      offered: 5,
      attempts: 6,
      completed: 5,
      good: 5,
      goodput_share: 1,
      sheds: { '429 admission_capacity': 1 },
      retry_amplification: 1.2,
      conservation_ok: true,
      max_inflight: 2,
    });
    expect(summary.tenants.map((t) => t.tenant)).toEqual(['a', 'b']);
    expect(files.stdout).toContain('goodput');
  });
});
