import { describe, expect, test } from 'vitest';
import { missingFlags, proxyNodeFlags, SEMI_SPACE_MB } from './proxy-node-flags.js';

describe('proxy node flags', () => {
  test('single-threaded GC and a small young generation on one CPU; nothing with more', () => {
    expect(proxyNodeFlags(1)).toEqual(['--single-threaded-gc', `--max-semi-space-size=${SEMI_SPACE_MB}`]);
    expect(proxyNodeFlags(2)).toEqual([]);
  });

  test('flags given on the command line or in NODE_OPTIONS (either spelling) are not missing', () => {
    const want = ['--max-semi-space-size=2', '--single-threaded-gc'];
    expect(missingFlags(want, [], undefined)).toEqual(want);
    expect(missingFlags(want, ['--single_threaded_gc'], '--max-semi-space-size=2')).toEqual([]);
    expect(missingFlags(want, ['--max-semi-space-size=4'], '')).toEqual(want);
    expect(missingFlags([], [], undefined)).toEqual([]);
  });
});
