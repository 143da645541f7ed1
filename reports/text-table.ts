/**
 * Plain-text tables for the terminal (`sluice size`, `sluice observe`): columns
 * separated by two spaces, no borders and no colour, so the output pastes into
 * an issue or a doc as it is. cli-table3 measures the cells (wide characters
 * included) and pads them.
 */
import { createRequire } from 'node:module';
import type CliTable from 'cli-table3';

/** cli-table3, loaded on first use rather than when any `sluice` command starts. */
const Table = (): typeof CliTable => createRequire(import.meta.url)('cli-table3');

/** How a column's cells line up. */
export type Align = 'left' | 'right';

const NO_BORDER = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

/**
 * The table as lines of text, the head first; `align` per column (left when absent);
 * `indent` spaces before every line. Trailing spaces are trimmed.
 */
export function textTable(
  head: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  opts: { align?: readonly Align[]; indent?: number } = {},
): string {
  const table = new (Table())({
    head: [...head],
    chars: NO_BORDER,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true },
    colAligns: head.map((_, i) => opts.align?.[i] ?? 'left'),
  });
  for (const r of rows) table.push(head.map((_, i) => String(r[i] ?? '')));
  const pad = ' '.repeat(opts.indent ?? 0);
  return table
    .toString()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => `${pad}${l}`.trimEnd())
    .join('\n');
}
