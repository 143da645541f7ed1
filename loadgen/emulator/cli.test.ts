import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { engineCommand } from '../../cli/engine.js';
import type { RunningEmulator } from './emulator.js';
import { http } from './test/helpers.js';

/** Runs `sluice engine ARGS` in-process until `stop` resolves. */
function run(
  args: string[],
  until: Promise<unknown>,
  onStart: (e: RunningEmulator) => void,
): Promise<unknown> {
  const program = new Command('sluice').exitOverride();
  const out: string[] = [];
  program.configureOutput({ writeErr: (s) => out.push(s), writeOut: (s) => out.push(s) });
  const cmd = engineCommand({ until: () => until, onStart }).exitOverride();
  cmd.configureOutput({ writeErr: (s) => out.push(s), writeOut: (s) => out.push(s) });
  program.addCommand(cmd);
  return program.parseAsync(['node', 'sluice', 'engine', ...args]);
}

describe('sluice engine', () => {
  it('starts with startup faults from flags and serves until told to stop', async () => {
    let stop = (): void => undefined;
    const until = new Promise<void>((r) => {
      stop = r;
    });
    let emu: RunningEmulator | undefined;
    const write = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    let done: Promise<unknown>;
    try {
      done = run(
        [
          '--port',
          '0',
          '--profile',
          'fixed',
          '--health-down',
          '--error-rate',
          '0.5',
          '--stall-ms',
          '7',
          '--json',
        ],
        until,
        (e) => {
          emu = e;
        },
      );
      await new Promise<void>((r) => {
        const poll = () => (emu ? r() : setTimeout(poll, 5));
        poll();
      });
    } finally {
      process.stdout.write = write;
    }
    const e = emu as RunningEmulator;
    expect(e.faults()).toMatchObject({ health: 'down', errorRate: 0.5, stallMs: 7 });
    expect((await http(e.url, 'GET', '/health')).status).toBe(503);
    stop();
    await done;
  });

  it('rejects an invalid flag value, naming the flag', async () => {
    await expect(
      run(['--port', '0', '--error-rate', '2'], Promise.resolve(), () => undefined),
    ).rejects.toThrow(/--error-rate: "2" is not a number from 0 to 1/);
  });
});
