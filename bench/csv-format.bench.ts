// The CSV writer of requests.csv against csv-stringify on the same rows (BENCHMARKS.md, "CSV writing"):
// `node --import tsx bench/csv-format.bench.ts`.
import { stringify } from 'csv-stringify/sync';
import { csvLine } from '../sim/run/sinks.js';

const N = 200_000;
const row = [
  123456,
  123000,
  1,
  'tenant-a',
  81234.567,
  'http1',
  true,
  false,
  true,
  1024,
  256,
  'admitted',
  'completed',
  200,
  '',
  12.345,
  5678.9,
  0,
  '10.0.0.1:8000',
  true,
  0,
];
const rows = Array.from({ length: N }, (_, i) => {
  const r = [...row];
  r[0] = i;
  return r;
});
const time = (name: string, f: () => number) => {
  const ts: number[] = [];
  let n = 0;
  for (let k = 0; k < 5; k++) {
    const a = performance.now();
    n = f();
    ts.push(performance.now() - a);
  }
  ts.sort((x, y) => x - y);
  console.log(name, 'median', (ts[2] ?? 0).toFixed(0), 'ms for', N, 'rows', n);
};
time('csvLine', () => {
  let len = 0;
  for (const r of rows) len += csvLine(r).length;
  return len;
});
time('csv-stringify/sync per row', () => {
  let len = 0;
  for (const r of rows)
    len += stringify([r], { cast: { boolean: (b: boolean) => (b ? 'true' : 'false') } }).length;
  return len;
});
time(
  'csv-stringify/sync batch',
  () => stringify(rows, { cast: { boolean: (b: boolean) => (b ? 'true' : 'false') } }).length,
);
