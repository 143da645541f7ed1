/**
 * CSV in and out: writing through csv-stringify, reading through csv-parse
 * (RFC 4180: quoted fields, doubled quotes, commas and newlines inside quotes,
 * LF or CRLF line ends, a byte-order mark). Both load on first use, so a
 * command that reads or writes no CSV does not pay for them at start-up.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);
const csvParse = (): typeof import('csv-parse/sync') => load('csv-parse/sync');
const csvStringify = (): typeof import('csv-stringify/sync') => load('csv-stringify/sync');

/** A CSV file that cannot be read, with the 1-based line where it went wrong. */
export class CsvError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'CsvError';
  }
}

/** What csv-parse says of a file it cannot read, in this project's words. */
const PARSE_ERRORS: Readonly<Record<string, string>> = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is not closed',
  CSV_INVALID_CLOSING_QUOTE: 'unexpected character after a closing quote',
};

/**
 * Parses CSV text into rows of string fields. A trailing line end does not
 * make an empty last row; a byte-order mark is dropped; rows may differ in
 * width (parseCsvRecords checks them against the header).
 */
export function parseCsv(text: string): string[][] {
  try {
    return csvParse().parse(text, { bom: true, relax_column_count: true }) as string[][];
  } catch (e) {
    const err = e as { code?: string; lines?: number; message?: string };
    const said = err.code === undefined ? undefined : PARSE_ERRORS[err.code];
    throw new CsvError(said ?? err.message ?? String(e), err.lines ?? 1);
  }
}

/**
 * Parses CSV with a header line into records keyed by column name.
 * Throws CsvError when a row's field count differs from the header's (the
 * line number assumes no newlines inside quoted fields; the record number is exact).
 */
export function parseCsvRecords(text: string): { columns: string[]; records: Record<string, string>[] } {
  const [header, ...body] = parseCsv(text);
  if (header === undefined) return { columns: [], records: [] };
  const records = body.map((fields, r) => {
    if (fields.length !== header.length) {
      throw new CsvError(
        `record ${r + 1} has ${fields.length} fields where the header has ${header.length}`,
        r + 2,
      );
    }
    const rec: Record<string, string> = {};
    header.forEach((name, k) => {
      rec[name] = fields[k] ?? '';
    });
    return rec;
  });
  return { columns: header, records };
}

/** Writes rows (with a header line) as CSV text, LF line ends, quoting only where needed. */
export function toCsv(
  columns: readonly string[],
  rows: readonly (readonly (string | number | boolean)[])[],
): string {
  return csvStringify().stringify([columns as string[], ...(rows as (string | number | boolean)[][])], {
    record_delimiter: 'unix',
    cast: { boolean: (b) => (b ? 'true' : 'false') },
  });
}
