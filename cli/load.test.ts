/**
 * `sluice load` exits 3 (the measurement is invalid) when the driver fell behind its schedule. The
 * test stalls the event loop once for 400 ms in the middle of a short run at 40 req/s, so the
 * sends due meanwhile (about 16) go out late, above the 5 always allowed.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Backend, startBackend } from '../loadgen/driver/test/backend.js';
import { loadCommand } from './load.js';

let backend: Backend | undefined;
afterEach(async () => {
  await backend?.close();
  backend = undefined;
  vi.restoreAllMocks();
});

describe('sluice load when the driver falls behind', () => {
  it('exits 3 and says the measurement is invalid, naming the late sends and the bound', async () => {
    backend = await startBackend();
    let stderr = '';
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
      stderr += String(s);
      return true;
    });
    const stall = setTimeout(() => {
      const until = performance.now() + 400;
      while (performance.now() < until) {
        // the stall: nothing runs, sends fall due
      }
    }, 1200);
    const before = process.exitCode;
    process.exitCode = undefined;
    try {
      await loadCommand().parseAsync(
        [
          '--target',
          backend.url,
          '--scenario',
          'scenarios/http2-mix.yaml',
          '--duration-scale',
          '0.02',
          '--json',
        ],
        { from: 'user' },
      );
      expect(process.exitCode).toBe(3);
    } finally {
      clearTimeout(stall);
      process.exitCode = before;
    }
    expect(stderr).toMatch(
      /sluice load: the measurement is invalid: the driver fell behind its schedule, \d+ of \d+ sends \([\d.]+ %\) late by > 10 ms \(lag p99 [\d.]+ ms\), above the 1 % bound/,
    );
  });

  it('writes the report sluice run --out writes, from the same files, with --out', async () => {
    backend = await startBackend();
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = mkdtempSync(join(tmpdir(), 'sluice-load-'));
    const before = process.exitCode;
    try {
      await loadCommand().parseAsync(
        [
          '--target',
          backend.url,
          '--scenario',
          'scenarios/http2-mix.yaml',
          '--duration-scale',
          '0.02',
          '--max-late-share',
          '1',
          '--out',
          out,
        ],
        { from: 'user' },
      );
    } finally {
      process.exitCode = before;
    }
    expect(existsSync(join(out, 'summary.json'))).toBe(true);
    expect(readFileSync(join(out, 'report', 'report.html'), 'utf8')).toContain('<html');
  }, 60_000);
});
