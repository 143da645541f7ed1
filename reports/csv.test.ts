import { describe, expect, it } from 'vitest';
import { CsvError, parseCsv, parseCsvRecords, toCsv } from './csv.js';

describe('CSV reading', () => {
  it('reads quoted fields with commas, doubled quotes and newlines', () => {
    const text = 'tenant,n\n"acme, inc.",1\n"say ""hi""",2\n"two\nlines",3\n';
    expect(parseCsv(text)).toEqual([
      ['tenant', 'n'],
      ['acme, inc.', '1'],
      ['say "hi"', '2'],
      ['two\nlines', '3'],
    ]);
  });

  it('accepts CRLF line ends, a byte-order mark, empty fields and no final newline', () => {
    expect(parseCsv('\ufeffa,b\r\n,x\r\n1,')).toEqual([
      ['a', 'b'],
      ['', 'x'],
      ['1', ''],
    ]);
  });

  it('names the line of an unclosed quote', () => {
    expect(() => parseCsv('a\n"open,1\n')).toThrow(CsvError);
    expect(() => parseCsv('a\n"open,1\n')).toThrow(/line 2: a quoted field is not closed/);
  });

  it('rejects text after a closing quote', () => {
    expect(() => parseCsv('"a"b\n')).toThrow(/after a closing quote/);
  });

  it('keys records by header and rejects rows of the wrong width', () => {
    expect(parseCsvRecords('a,b\n1,2\n').records).toEqual([{ a: '1', b: '2' }]);
    expect(() => parseCsvRecords('a,b\n1,2,3\n')).toThrow(/record 1 has 3 fields where the header has 2/);
  });
});

describe('CSV writing', () => {
  it('quotes only where needed and reads back what it wrote', () => {
    const text = toCsv(
      ['tenant', 'good', 'ok'],
      [
        ['acme, "inc"', 3, true],
        ['plain', 0.5, false],
      ],
    );
    expect(text).toBe('tenant,good,ok\n"acme, ""inc""",3,true\nplain,0.5,false\n');
    expect(parseCsv(text)).toEqual([
      ['tenant', 'good', 'ok'],
      ['acme, "inc"', '3', 'true'],
      ['plain', '0.5', 'false'],
    ]);
  });
});
