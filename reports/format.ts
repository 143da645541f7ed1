/**
 * Number formatting for tables and text: fixed digits, no locale, so a
 * report reads the same on every machine.
 */

/** A number with `digits` decimals, thousands separated by a thin comma ("12,345.6"). */
export function num(v: number, digits = 0): string {
  if (!Number.isFinite(v)) return String(v);
  const fixed = Math.abs(v).toFixed(digits);
  const [int = '0', frac] = fixed.split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const sign = v < 0 && Number(fixed) !== 0 ? '-' : '';
  return `${sign}${grouped}${frac === undefined ? '' : `.${frac}`}`;
}

/** A ratio (0..1) as a percentage with one decimal ("14.5%"). */
export function pct(ratio: number, digits = 1): string {
  return `${num(ratio * 100, digits)}%`;
}

/** Milliseconds, whole ("2,400 ms"). */
export function ms(v: number): string {
  return `${num(v)} ms`;
}

/** Requests per second with two decimals ("11.27 rps"). */
export function rps(v: number): string {
  return `${num(v, 2)} rps`;
}

/** "k=v, k=v" for a parameter record, keys in the given order (else sorted). */
export function params(p: Record<string, number>, order?: readonly string[]): string {
  const keys = order ? order.filter((k) => k in p) : Object.keys(p).sort();
  return keys.map((k) => `${k}=${p[k]}`).join(', ');
}

/** Counts of a record, largest first ("capacity_shed 160, queue_timeout 40"), or "none". */
export function counts(rec: Record<string, number>): string {
  const entries = Object.entries(rec).filter(([, v]) => v !== 0);
  if (entries.length === 0) return 'none';
  entries.sort(([ak, av], [bk, bv]) => bv - av || (ak < bk ? -1 : ak > bk ? 1 : 0));
  return entries.map(([k, v]) => `${k} ${num(v)}`).join(', ');
}
