/**
 * A profile written by `sluice calibrate --out` runs in every job that takes engines: `run`,
 * `size` and `check` (through a scenario's `engines: [{ profile, profile_file, count }]`) and
 * `engine` (`--profile-file`). Each test compares against the same job without the file, so a
 * job that ignored it would fail.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../loadgen/emulator/emulator.js';
import { chat, http } from '../loadgen/emulator/test/helpers.js';
import { engineCommand } from './engine.js';
import { sluiceInProcess } from './test/process.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cal-jobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What `sluice calibrate --out` writes: a slow host (2 ms per sequence) and a 200 ms frontend. */
const SLOW = {
  base: 'llama-3.1-8b-h100',
  terms: { memEfficiency: 0.7, hostPerSeqMs: 2, mfu: 0.3, apiOverheadMs: 200 },
};
writeFileSync(join(dir, 'my-h100.json'), `${JSON.stringify(SLOW, null, 2)}\n`);

const scenario = (withFile: boolean): string => `
name: calibrated
description: two engines of a calibrated profile
seed: 3
duration_s: 20
warmup_s: 2
gate:
  rule:
    serviceArguments:
      externalIP: 192.0.2.10
      port: 8080
      protocol: tcp
      mode: 4
      sse_mode: true
      fc_mode: enforce
      fc_max_outstanding: 32
      fc_max_queue_depth: 32
      fc_max_queue_wait_ms: 2000
engines:
  - profile: llama-3.1-8b-h100
${withFile ? '    profile_file: my-h100.json\n' : ''}    count: 2
clients:
  arrival: { kind: poisson, rate_per_sec: 6 }
  prompt_tokens: { kind: fixed, value: 256 }
  output_tokens: { kind: fixed, value: 64 }
  retry: { kind: none }
`;
writeFileSync(join(dir, 'calibrated.yaml'), scenario(true));
writeFileSync(join(dir, 'plain.yaml'), scenario(false));

interface Summary {
  ttft_ms: { p50: number };
}

describe('a calibrated profile file in every job', () => {
  it('run: the run takes the fitted terms (TTFT p50 above the 200 ms frontend delay of the file)', async () => {
    const a = await sluiceInProcess(
      'run',
      join(dir, 'calibrated.yaml'),
      '--out',
      join(dir, 'run-a'),
      '--json',
    );
    const b = await sluiceInProcess('run', join(dir, 'plain.yaml'), '--out', join(dir, 'run-b'), '--json');
    expect([a.code, b.code, a.stderr]).toEqual([0, 0, '']);
    const ta = (JSON.parse(a.stdout) as Summary).ttft_ms.p50;
    const tb = (JSON.parse(b.stdout) as Summary).ttft_ms.p50;
    expect(ta).toBeGreaterThan(200);
    expect(tb).toBeLessThan(40);
  }, 60_000);

  it('size: every point of the grid runs the calibrated engines', async () => {
    const grid = ['--vary', 'fc_max_outstanding=8,32', '--slo', 'shed_rate<=0.5', '--json', '--workers', '1'];
    const a = await sluiceInProcess('size', join(dir, 'calibrated.yaml'), ...grid);
    const b = await sluiceInProcess('size', join(dir, 'plain.yaml'), ...grid);
    expect([a.code, b.code]).toEqual([0, 0]);
    const ttfts = (out: string): number[] =>
      (JSON.parse(out).points as { figures: { ttft_p50_ms: number } }[]).map((p) => p.figures.ttft_p50_ms);
    expect(ttfts(a.stdout)).toHaveLength(2);
    for (const t of ttfts(a.stdout)) expect(t).toBeGreaterThan(200);
    for (const t of ttfts(b.stdout)) expect(t).toBeLessThan(40);
  }, 120_000);

  it('check: the baseline of the calibrated scenario holds on a re-run and differs from the plain one', async () => {
    const base = join(dir, 'baseline.json');
    const up = await sluiceInProcess(
      'check',
      join(dir, 'calibrated.yaml'),
      '--baseline',
      base,
      '--update-baseline',
    );
    expect(up.code).toBe(0);
    const again = await sluiceInProcess('check', join(dir, 'calibrated.yaml'), '--baseline', base);
    expect(again.code).toBe(0);
    const plainBase = join(dir, 'plain-baseline.json');
    expect(
      (await sluiceInProcess('check', join(dir, 'plain.yaml'), '--baseline', plainBase, '--update-baseline'))
        .code,
    ).toBe(0);
    const ttft = (f: string): number =>
      (
        JSON.parse(readFileSync(f, 'utf8')).scenarios.calibrated as {
          runs: { figures: { ttft_p50_ms: number } }[];
        }
      ).runs[0]?.figures.ttft_p50_ms as number;
    expect(ttft(base)).toBeGreaterThan(200);
    expect(ttft(plainBase)).toBeLessThan(40);
  }, 120_000);

  it('engine: --profile-file applies the fitted frontend delay to every request', async () => {
    const timed = async (args: string[]): Promise<number> => {
      let stop = (): void => undefined;
      const until = new Promise<void>((r) => {
        stop = r;
      });
      let emu: RunningEmulator | undefined;
      const program = new Command('sluice').exitOverride();
      program.addCommand(engineCommand({ until: () => until, onStart: (e) => (emu = e) }).exitOverride());
      const write = process.stdout.write;
      process.stdout.write = (() => true) as typeof process.stdout.write;
      let done: Promise<unknown>;
      try {
        done = program.parseAsync(['node', 'sluice', 'engine', '--port', '0', ...args]);
        for (let i = 0; i < 400 && emu === undefined; i++) await new Promise((r) => setTimeout(r, 5));
      } finally {
        process.stdout.write = write;
      }
      const e = emu as RunningEmulator;
      const t0 = performance.now();
      const r = await http(e.url, 'POST', '/v1/chat/completions', chat(2));
      const ms = performance.now() - t0;
      stop();
      await done;
      expect(r.status).toBe(200);
      return ms;
    };
    expect(await timed(['--profile-file', join(dir, 'my-h100.json')])).toBeGreaterThan(200);
    // Without the file: the base profile's 4 ms frontend and a 2-token request, well under
    // 200 ms of wall time even on a loaded machine.
    expect(await timed([])).toBeLessThan(150);
  }, 60_000);
});
