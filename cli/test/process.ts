/** For tests: runs the real `sluice` binary as a user does (a process start costs up to a second or two: tsx when the bundle in dist/ is stale). */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { vi } from 'vitest';
import { REPO_ROOT } from '../../sim/scenario/data-files.js';

const run = promisify(execFile);

/** `bin/sluice.js` in this checkout. */
export const SLUICE_BIN = join(REPO_ROOT, 'bin', 'sluice.js');

/** What a finished `sluice` process gave. */
export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `sluice ARGS...` (in `cwd`, default the current directory); resolves with the exit code and both streams. */
export async function sluiceProcess(args: readonly string[], cwd?: string): Promise<ProcessResult> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [SLUICE_BIN, ...args],
      cwd === undefined ? {} : { cwd },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs the command tree in this process, capturing stdout, stderr and the exit code. */
export async function sluiceInProcess(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../main.js');
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
    stdout += String(s);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    stderr += String(s);
    return true;
  });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await main(['node', 'sluice', ...args]);
    return { code: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = before;
  }
}
