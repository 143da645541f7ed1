import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  EXIT_FINDING,
  EXIT_INTERNAL,
  EXIT_INVALID,
  EXIT_UNRESOLVED,
  reportError,
  shareArg,
  UsageError,
} from './errors.js';

const before = process.exitCode;
afterEach(() => {
  process.exitCode = before;
  vi.restoreAllMocks();
});

describe('exit codes of errors', () => {
  it('keeps 1 for findings: an internal error exits 4, an input error 2', () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect([EXIT_FINDING, EXIT_INVALID, EXIT_UNRESOLVED, EXIT_INTERNAL]).toEqual([1, 2, 3, 4]);
    reportError(new Error('boom'));
    expect(process.exitCode).toBe(4);
    reportError(new UsageError('--x: bad'));
    expect(process.exitCode).toBe(2);
  });

  it('parses a share from 0 to 1, naming the flag otherwise', () => {
    expect(shareArg('--max-late-share')('0.05')).toBe(0.05);
    expect(() => shareArg('--max-late-share')('2')).toThrow(
      '--max-late-share: "2" is not a number from 0 to 1',
    );
    expect(() => shareArg('--max-late-share')('')).toThrow(/not a number from 0 to 1/);
  });
});
