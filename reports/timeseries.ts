/**
 * `timeseries.csv` in both directions: SecondRow flattened to scalar columns,
 * then `decisions_<reason>` columns, then per endpoint `ep_<id>_running`,
 * `ep_<id>_waiting`, `ep_<id>_kv_usage`, then the per-second maxima
 * `inflight_max`, `queued_max` (optional when reading: older files lack them).
 */
import { DECISION_REASONS } from '../gate/index.js';
import { SECOND_MAX_COLUMNS, SECOND_SCALAR_COLUMNS, type SecondRow } from '../sim/run/records.js';
import { CsvError, parseCsvRecords, toCsv } from './csv.js';

/** The scalar columns, in file order (defined with the record types). */
export { SECOND_SCALAR_COLUMNS };

const EP_SUFFIXES = ['_running', '_waiting', '_kv_usage'] as const;

/** Orders reasons as the decisions counter exports them, unknown ones after, by name. */
export function orderReasons(reasons: Iterable<string>): string[] {
  const known: readonly string[] = DECISION_REASONS;
  const rank = (r: string): number => {
    const k = known.indexOf(r);
    return k < 0 ? known.length : k;
  };
  return [...new Set(reasons)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Flattens rows to `timeseries.csv` text (the reference layout the reader accepts). */
export function formatTimeseriesCsv(rows: readonly SecondRow[]): string {
  const reasons = orderReasons(rows.flatMap((r) => Object.keys(r.decisions)));
  const endpoints = [...new Set(rows.flatMap((r) => r.endpoints.map((e) => e.id)))];
  const columns = [
    ...SECOND_SCALAR_COLUMNS,
    ...reasons.map((r) => `decisions_${r}`),
    ...endpoints.flatMap((id) => EP_SUFFIXES.map((s) => `ep_${id}${s}`)),
    ...SECOND_MAX_COLUMNS,
  ];
  const body = rows.map((r) => [
    ...SECOND_SCALAR_COLUMNS.map((c) => r[c]),
    ...reasons.map((x) => r.decisions[x] ?? 0),
    ...endpoints.flatMap((id) => {
      const e = r.endpoints.find((x) => x.id === id);
      return e ? [e.running, e.waiting, e.kv_usage] : [0, 0, 0];
    }),
    ...SECOND_MAX_COLUMNS.map((c) => r[c]),
  ]);
  return toCsv(columns, body);
}

/**
 * Reads `timeseries.csv` text. Throws CsvError naming the column and line
 * when a required column is missing or a number does not parse.
 */
export function parseTimeseriesCsv(text: string): SecondRow[] {
  const { columns, records } = parseCsvRecords(text);
  if (columns.length === 0) return [];
  for (const c of SECOND_SCALAR_COLUMNS) {
    if (!columns.includes(c)) throw new CsvError(`no column "${c}"`, 1);
  }
  const reasonCols = columns.filter((c) => c.startsWith('decisions_'));
  const epIds: string[] = [];
  for (const c of columns) {
    if (!c.startsWith('ep_') || !c.endsWith('_running')) continue;
    const id = c.slice(3, -'_running'.length);
    if (!epIds.includes(id)) epIds.push(id);
  }
  return records.map((rec, i) => {
    const line = i + 2;
    const num = (col: string): number => {
      const s = rec[col] ?? '';
      const v = Number(s);
      if (s.trim() === '' || !Number.isFinite(v)) throw new CsvError(`${col}: "${s}" is not a number`, line);
      return v;
    };
    const opt = (col: string): number | '' => ((rec[col] ?? '') === '' ? '' : num(col));
    const decisions: Record<string, number> = {};
    for (const c of reasonCols) decisions[c.slice('decisions_'.length)] = num(c);
    const n = num;
    return {
      t_s: n('t_s'),
      inflight: n('inflight'),
      queued: n('queued'),
      limit: n('limit'),
      configured_limit: n('configured_limit'),
      queue_depth: n('queue_depth'),
      adapt_state: rec.adapt_state ?? '',
      arrivals: n('arrivals'),
      completed: n('completed'),
      good: n('good'),
      ttft_p50_ms: opt('ttft_p50_ms'),
      ttft_p95_ms: opt('ttft_p95_ms'),
      e2e_p50_ms: opt('e2e_p50_ms'),
      e2e_p95_ms: opt('e2e_p95_ms'),
      // A file from before the maxima were written: the end-of-second readings stand in.
      inflight_max: columns.includes('inflight_max') ? n('inflight_max') : n('inflight'),
      queued_max: columns.includes('queued_max') ? n('queued_max') : n('queued'),
      decisions,
      endpoints: epIds.map((id) => ({
        id,
        running: opt(`ep_${id}_running`) || 0,
        waiting: opt(`ep_${id}_waiting`) || 0,
        kv_usage: opt(`ep_${id}_kv_usage`) || 0,
      })),
    };
  });
}
