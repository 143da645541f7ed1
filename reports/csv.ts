/**
 * CSV in and out. Writing goes through csv-stringify; reading is a small
 * RFC 4180 parser (quoted fields, doubled quotes, commas and newlines inside
 * quotes, LF or CRLF line ends), enough for the files Sluice writes.
 */
import { stringify } from 'csv-stringify/sync';

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

/**
 * Parses CSV text into rows of string fields. A trailing line end does not
 * make an empty last row; a byte-order mark is dropped.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let quoteLine = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let atFieldStart = true;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new CsvError('unexpected character after a closing quote', line);
        }
        continue;
      }
      if (c === '\n') line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"' && atFieldStart) {
      quoted = true;
      quoteLine = line;
      atFieldStart = false;
      i++;
      continue;
    }
    if (c === ',') {
      row.push(field);
      field = '';
      atFieldStart = true;
      i++;
      continue;
    }
    if (c === '\r' || c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      atFieldStart = true;
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line++;
      continue;
    }
    field += c;
    atFieldStart = false;
    i++;
  }
  if (quoted) throw new CsvError('a quoted field is not closed', quoteLine);
  if (!atFieldStart || field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
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
  return stringify([columns as string[], ...(rows as (string | number | boolean)[][])], {
    record_delimiter: 'unix',
    cast: { boolean: (b) => (b ? 'true' : 'false') },
  });
}
