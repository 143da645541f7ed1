import { describe, expect, it } from 'vitest';
import { observeText } from './format.js';
import type { ModeFigures, ObserveResult } from './observe.js';

const mode = (shed: number): ModeFigures => ({
  goodput_rps: 10.157,
  goodput_share: 0.9,
  throughput_rps: 11,
  shed_rate: shed,
  ttft_p95_ms: 139.4,
  e2e_p95_ms: 900,
  max_inflight: 49,
});

function result(): ObserveResult {
  return {
    trace: { file: 'd.jsonl', format: 'jsonl', speedup: 1, requests: 1234, replay_s: 60, bad_lines: 0 },
    rule: {},
    would_shed: 140,
    would_queue: 551,
    would_shed_share: 0.113,
    per_ceiling: {
      service: { shed: 140, queue: 551 },
      endpoint: { shed: 0, queue: 0 },
      tenant: { shed: 12, queue: 0 },
    },
    peak_inflight: 49,
    ceilings: [{ shed_share: 0, max_outstanding: 49 }],
    tenants: [
      {
        tenant: 'a-very-long-tenant-name-indeed-longer-than-24',
        offered: 1000,
        would_shed: 100,
        would_queue: 500,
      },
      { tenant: 'b', offered: 234, would_shed: 40, would_queue: 51 },
    ],
    bucket_s: 10,
    over_time: [],
    compare: { observe: mode(0), enforce: mode(0.113) },
  };
}

/** The lines of the block that starts with `head`, up to the next blank line. */
function block(text: string, head: string): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.includes(head));
  const end = lines.findIndex((l, i) => i > at && l.trim() === '');
  return lines.slice(at, end < 0 ? undefined : end);
}

describe('observe text', () => {
  it('lines the tenants table up under its head, however long a tenant name is', () => {
    const [title, head, ...rows] = block(observeText(result()), 'tenants (top');
    expect(title).toBe('tenants (top 2 of 2)');
    const endOf = (line: string, word: string): number => line.indexOf(word) + word.length;
    // Numbers are right-aligned: each ends where its column head ends.
    const heads = ['offered', 'would shed', 'would queue'];
    const cells = [
      ['1000', '100', '500'],
      ['234', '40', '51'],
    ];
    rows.forEach((row, i) => {
      const nums = row.trim().split(/\s+/).slice(-3);
      expect(nums).toEqual(cells[i]);
      heads.forEach((h, j) => {
        const cell = cells[i]?.[j] ?? '';
        expect(row.lastIndexOf(cell, endOf(head ?? '', h)) + cell.length, `${h} in row ${i}`).toBe(
          endOf(head ?? '', h),
        );
      });
    });
  });

  it('shows the shed rate as a percentage, as every other table does', () => {
    const cmp = block(observeText(result()), 'the same trace');
    expect(cmp.find((l) => l.trim().startsWith('enforce'))).toContain('11.3%');
  });
});
