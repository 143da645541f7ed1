import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { REQUEST_COLUMNS, type RequestRecord, type RunSummary, type SecondRow } from './records.js';
import { csvLine, secondColumns } from './sinks.js';

/** A time-series row for `ids` (2 running, 0 waiting, 1 % KV each), with `over` replacing fields. */
function secondRow(ids: readonly string[], over: Partial<SecondRow> = {}): SecondRow {
  return {
    t_s: 1,
    inflight: 2,
    queued: 0,
    limit: 8,
    configured_limit: 8,
    queue_depth: 4,
    adapt_state: 'off',
    arrivals: 3,
    completed: 1,
    good: 1,
    ttft_p50_ms: 12.5,
    ttft_p95_ms: '',
    e2e_p50_ms: 100,
    e2e_p95_ms: 100,
    inflight_max: 3,
    queued_max: 1,
    decisions: { admitted: 3 },
    endpoints: ids.map((id) => ({ id, running: 2, waiting: 0, kv_usage: 0.01 })),
    ...over,
  };
}

describe('CSV output', () => {
  it('formats rows exactly as csv-stringify does (quotes, commas, line breaks, booleans as true/false)', () => {
    const rows = [
      ['plain', 1, 2.5, true, false, ''],
      ['a,b', 'say "hi"', 'two\nlines', 'cr\rx', -0.001, 1e21],
    ];
    const ours = rows.map(csvLine).join('');
    const theirs = stringify(rows, { cast: { boolean: (b: boolean) => (b ? 'true' : 'false') } });
    expect(ours).toBe(theirs);
  });

  it('writes request records byte for byte as the generic row formatter does', async () => {
    const { FileSink } = await import('./sinks.js');
    const base: RequestRecord = {
      id: 7,
      logical_id: 5,
      attempt: 2,
      tenant: 'team-a',
      sent_ms: 1234.567,
      protocol: 'h2',
      stream: true,
      pd: false,
      inference: true,
      prompt_tokens: 256,
      output_tokens: 96,
      decision: 'queued',
      outcome: 'completed',
      status: 200,
      error: '',
      endpoint: '10.0.0.1:8000',
      queue_wait_ms: 0.001,
      ttft_ms: 12.5,
      e2e_ms: 100,
      good: true,
      generated_tokens: 96,
      wasted_tokens: 0,
      tpot_ms: 0.921,
    };
    const odd: RequestRecord[] = [
      {
        ...base,
        tenant: 'a,"b"',
        error: 'x\ny',
        queue_wait_ms: '',
        ttft_ms: '',
        e2e_ms: '',
        good: false,
        tpot_ms: '',
      },
      { ...base, id: 1e21, sent_ms: 1e21, endpoint: '', status: 0, outcome: 'in_system', tpot_ms: 1e21 },
      { ...base, tenant: 'équipe-ü', sent_ms: -0, ttft_ms: 0.1 + 0.2, e2e_ms: 999_999_999_999_999 },
      { ...base, tenant: 'long'.repeat(700), attempt: 10 ** 15, prompt_tokens: 1e-7, wasted_tokens: -3 },
      {
        ...base,
        sent_ms: 1 / 3,
        queue_wait_ms: 999_999_999_999.999,
        ttft_ms: 0.07,
        e2e_ms: 2.5e-7,
        tpot_ms: 1 / 3,
      },
      { ...base, sent_ms: 1e12 - 0.001, queue_wait_ms: 10.1, ttft_ms: 0.1 + 0.2, e2e_ms: 3600000.5 },
    ];
    // Enough rows to cross several chunk boundaries.
    const records = Array.from({ length: 3000 }, (_, i) => {
      const r = odd[i % 9] ?? base;
      return { ...r, id: i, sent_ms: r === base ? i * 1.001 : r.sent_ms };
    });
    const dir = mkdtempSync(join(tmpdir(), 'sluice-sink-'));
    try {
      const sink = new FileSink(dir, []);
      // Flushes between batches, as a run does: the chunks written out are filled again.
      for (let i = 0; i < records.length; i++) {
        sink.request(records[i]!);
        if (i % 700 === 699) await sink.flush();
      }
      await sink.close({} as RunSummary);
      const expected =
        csvLine(REQUEST_COLUMNS) + records.map((r) => csvLine(REQUEST_COLUMNS.map((c) => r[c]))).join('');
      expect(readFileSync(join(dir, 'requests.csv'), 'utf8')).toBe(expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes time-series rows byte for byte as the generic row formatter does', async () => {
    const { FileSink, flattenSecond } = await import('./sinks.js');
    const ids = ['10.0.0.1:8000', '10.0.0.2:8000'];
    const base = secondRow(ids, { e2e_p95_ms: 1234.567, decisions: { admitted: 3, queued: 1 } });
    const rows: SecondRow[] = [
      base,
      { ...base, adapt_state: 'a,"b"', ttft_p50_ms: 0.1 + 0.2 },
      { ...base, t_s: 1e21, inflight: 2 ** 40, e2e_p50_ms: 1 / 3, e2e_p95_ms: '' },
      { ...base, adapt_state: 'état', decisions: {} },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'sluice-sink-'));
    try {
      const sink = new FileSink(dir, ids);
      for (const r of rows) sink.second(r);
      await sink.close({} as RunSummary);
      const expected = csvLine(secondColumns(ids)) + rows.map((r) => csvLine(flattenSecond(r))).join('');
      expect(readFileSync(join(dir, 'timeseries.csv'), 'utf8')).toBe(expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes the header and rows of a file sink', async () => {
    const { FileSink } = await import('./sinks.js');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-sink-'));
    try {
      const sink = new FileSink(dir, ['10.0.0.1:8000']);
      sink.second(secondRow(['10.0.0.1:8000']));
      await sink.close({ scenario: 'x' } as RunSummary);
      expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))).toEqual({ scenario: 'x' });
      const lines = readFileSync(join(dir, 'timeseries.csv'), 'utf8').split('\n');
      expect(lines[0]!.startsWith('t_s,inflight,queued,limit,configured_limit,queue_depth,adapt_state')).toBe(
        true,
      );
      expect(
        lines[0]!.endsWith(
          'ep_10.0.0.1:8000_running,ep_10.0.0.1:8000_waiting,ep_10.0.0.1:8000_kv_usage,inflight_max,queued_max',
        ),
      ).toBe(true);
      expect(lines[1]!.startsWith('1,2,0,8,8,4,off,3,1,1,12.5,,100,100,3,0,')).toBe(true);
      expect(lines[1]!.endsWith(',2,0,0.01,3,1')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('class columns of requests.csv', () => {
  it('follow the request columns only when asked for, the other columns keeping their place', async () => {
    const { FileSink } = await import('./sinks.js');
    const { CLASS_REQUEST_COLUMNS } = await import('./records.js');
    const dirs = [false, true].map(() => mkdtempSync(join(tmpdir(), 'sluice-class-cols-')));
    try {
      const rec = {
        ...Object.fromEntries(REQUEST_COLUMNS.map((c) => [c, 1])),
        class: 'batch',
        disposition: 'defer',
        reason: '',
        deadline_met: true,
        useful: true,
      } as unknown as RequestRecord;
      for (const [i, classColumns] of [false, true].entries()) {
        const sink = new FileSink(dirs[i]!, [], { classColumns });
        sink.request(rec);
        await sink.close({} as RunSummary);
      }
      const plain = readFileSync(join(dirs[0]!, 'requests.csv'), 'utf8').split('\n');
      const wide = readFileSync(join(dirs[1]!, 'requests.csv'), 'utf8').split('\n');
      expect(plain[0]).toBe(REQUEST_COLUMNS.join(','));
      expect(wide[0]).toBe([...REQUEST_COLUMNS, ...CLASS_REQUEST_COLUMNS].join(','));
      expect(wide[1]).toBe(`${plain[1]},batch,defer,,true,true`);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});
