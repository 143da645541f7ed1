import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exitCodesHelp, nearestCommand } from './exit-codes.js';
import { buildProgram } from './main.js';
import { sluiceInProcess } from './test/process.js';

/** Runs the command tree in process, capturing stdout, stderr and the exit code. */
const sluice = sluiceInProcess;

describe('sluice command', () => {
  it('exits 0 without a stack when its reader closes the pipe early (sluice ... | head)', async () => {
    const bin = new URL('../bin/sluice.js', import.meta.url).pathname;
    const child = spawn(process.execPath, [bin, 'validate', 'scenarios/default.yaml'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy(); // the reader is gone before the command writes anything
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  }, 30_000);

  it('reports the package version with --version', () => {
    const program = buildProgram();
    let out = '';
    program.exitOverride().configureOutput({ writeOut: (s) => (out += s) });
    expect(() => program.parse(['node', 'sluice', '--version'])).toThrow();
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('an unknown command', () => {
  it('names the nearest command and exits 2, also with --help (which must not hide the typo)', async () => {
    for (const args of [['fidelty'], ['fidelty', '--help'], ['help', 'fidelty'], ['--help', 'fidelty']]) {
      const r = await sluice(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^sluice: unknown command 'fidelty'; the nearest is 'fidelity' \(sluice fidelity --help\)\ncommands: run, /,
      );
    }
  });

  it('names a nearest command even for a far typo (calibrat)', async () => {
    const r = await sluice('calibrat', '--help');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^sluice: unknown command 'calibrat'; the nearest is '[a-z0-9-]+'/);
  });

  it('picks the command with the fewest edits, a swap counting one', () => {
    expect(nearestCommand('clif', ['check', 'cliff', 'size'])).toBe('cliff');
    expect(nearestCommand('sizw', ['check', 'cliff', 'size'])).toBe('size');
    expect(nearestCommand('load', [])).toBeUndefined();
    expect(nearestCommand('laod', ['load', 'run'])).toBe('load');
  });
});

describe('the exit-code convention', () => {
  it('is stated in the main help and in every command help', () => {
    const program = buildProgram();
    let mainHelp = '';
    program.configureOutput({ writeOut: (s) => (mainHelp += s) });
    program.outputHelp();
    expect(mainHelp).toContain('1  a finding: a regression, a missed target, no point meets the SLOs');
    expect(mainHelp).toContain('3  the measurement is invalid');
    for (const sub of program.commands) {
      let help = '';
      sub.configureOutput({ writeOut: (s) => (help += s) });
      sub.outputHelp();
      expect(help, sub.name()).toMatch(
        /Exit codes:\n {2}0 {2}ok\n {2}1 {2}a finding.*\n {2}2 {2}bad input or usage\n {2}3 .*\n {2}4 {2}internal error/,
      );
    }
  });

  it('says what a finding and an invalid measurement are for the commands that use them', () => {
    expect(exitCodesHelp('size')).toContain('1  a finding: no point meets every SLO');
    expect(exitCodesHelp('fidelity')).toContain('1  a finding: a target missed');
    expect(exitCodesHelp('fidelity')).toMatch(/3 {2}the measurement is invalid: the driver fell behind/);
    expect(exitCodesHelp('run')).toContain('1  a finding (not used by this command)');
  });

  it('exits 2 when load is missing its required --target or --scenario', async () => {
    const noTarget = await sluice('load', '--scenario', 'scenarios/default.yaml');
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain("required option '--target <url>' not specified");
    const noScenario = await sluice('load', '--target', 'http://127.0.0.1:1');
    expect(noScenario.code).toBe(2);
    expect(noScenario.stderr).toContain("required option '--scenario <file>' not specified");
  });
});
