import { describe, expect, it } from 'vitest';
import { gridPoints, parseVaries, parseVary } from './grid.js';

describe('--vary parsing', () => {
  it('expands a range a:b:step including the upper end', () => {
    expect(parseVary('fc_max_outstanding=8:64:8', 'loxilb')).toEqual({
      field: 'fc_max_outstanding',
      values: [8, 16, 24, 32, 40, 48, 56, 64],
    });
  });

  it('stops a range at the last step below the upper end', () => {
    expect(parseVary('fc_max_outstanding=10:25:10', 'loxilb').values).toEqual([10, 20]);
  });

  it('keeps a list in the order given, and takes one value as a list of one', () => {
    expect(parseVary('fc_max_queue_depth=32,0,16', 'loxilb').values).toEqual([32, 0, 16]);
    expect(parseVary('fc_max_queue_depth=64', 'loxilb').values).toEqual([64]);
  });

  it('varies SMG settings in an SMG scenario, fractional rate steps without float noise', () => {
    expect(parseVary('max_concurrent_requests=-1,16', 'smg').values).toEqual([-1, 16]);
    expect(parseVary('rate_limit_tokens_per_second=0.1:0.3:0.1', 'smg').values).toEqual([0.1, 0.2, 0.3]);
  });

  it('names the flag, field, value and bound for a value above the field table maximum', () => {
    expect(() => parseVary('fc_max_queue_depth=0,70000', 'loxilb')).toThrow(
      '--vary fc_max_queue_depth=0,70000: fc_max_queue_depth 70000 is above the maximum 65536',
    );
    expect(() => parseVary('fc_max_outstanding=0:200000:1000', 'loxilb')).toThrow(
      'fc_max_outstanding 200000 is above the maximum 100000',
    );
  });

  it('refuses values below the minimum, non-integers and non-numbers', () => {
    expect(() => parseVary('fc_max_outstanding=-8,8', 'loxilb')).toThrow(
      'fc_max_outstanding -8 is below the minimum 0',
    );
    expect(() => parseVary('queue_size=-1', 'smg')).toThrow('queue_size -1 is below the minimum 0');
    expect(() => parseVary('fc_max_outstanding=8.5', 'loxilb')).toThrow(
      'fc_max_outstanding takes integers; 8.5 is not one',
    );
    expect(() => parseVary('fc_max_outstanding=eight', 'loxilb')).toThrow('"eight" is not a number');
  });

  it('refuses malformed ranges', () => {
    expect(() => parseVary('fc_max_outstanding=8:64', 'loxilb')).toThrow(
      'a range is a:b:step (three numbers), got 2 parts',
    );
    expect(() => parseVary('fc_max_outstanding=8:64:0', 'loxilb')).toThrow('the step must be above 0, got 0');
    expect(() => parseVary('fc_max_outstanding=64:8:8', 'loxilb')).toThrow('runs from 64 down to 8');
    expect(() => parseVary('fc_max_outstanding=', 'loxilb')).toThrow('no values');
    expect(() => parseVary('fc_max_outstanding', 'loxilb')).toThrow('expected FIELD=SPEC');
    expect(() => parseVary('fc_max_outstanding=8,8', 'loxilb')).toThrow('8 is listed twice');
  });

  it('suggests the nearest field for a misspelt one', () => {
    expect(() => parseVary('fc_max_outstandng=8', 'loxilb')).toThrow(
      /unknown field "fc_max_outstandng" \(did you mean fc_max_outstanding\?\); a loxilb scenario can vary fc_max_outstanding, /,
    );
  });

  it('says which dialect a field belongs to', () => {
    expect(() => parseVary('fc_max_outstanding=8', 'smg')).toThrow(
      'fc_max_outstanding is a loxilb rule field, but this scenario uses the smg dialect; vary one of max_concurrent_requests, queue_size, queue_timeout_secs, rate_limit_tokens_per_second',
    );
    expect(() => parseVary('queue_size=8', 'loxilb')).toThrow(
      'queue_size is an SMG setting, but this scenario uses the loxilb dialect',
    );
  });

  it('refuses word-valued fields, which have no range', () => {
    expect(() => parseVary('fc_adaptive=1', 'loxilb')).toThrow(
      'fc_adaptive takes a word (on, off, inherit), not a number',
    );
  });

  it('refuses the same field varied twice', () => {
    expect(() => parseVaries(['fc_max_outstanding=8', 'fc_max_outstanding=16'], 'loxilb')).toThrow(
      'the field is varied twice',
    );
  });
});

describe('the grid', () => {
  it('varies the last --vary fastest', () => {
    const v = parseVaries(['fc_max_outstanding=8,16', 'fc_max_queue_depth=0,4,8'], 'loxilb');
    expect(gridPoints(v)).toEqual([
      { fc_max_outstanding: 8, fc_max_queue_depth: 0 },
      { fc_max_outstanding: 8, fc_max_queue_depth: 4 },
      { fc_max_outstanding: 8, fc_max_queue_depth: 8 },
      { fc_max_outstanding: 16, fc_max_queue_depth: 0 },
      { fc_max_outstanding: 16, fc_max_queue_depth: 4 },
      { fc_max_outstanding: 16, fc_max_queue_depth: 8 },
    ]);
  });

  it('is one empty point when nothing varies', () => {
    expect(gridPoints([])).toEqual([{}]);
  });
});
