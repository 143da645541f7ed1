import { describe, expect, it } from 'vitest';
import { TraceFormatError } from './errors.js';
import {
  AZURE_DEFAULT_COLUMNS,
  azureNormaliser,
  azureStamp,
  mooncakeNormaliser,
  parseAzureHeader,
  parseAzureLine,
  parseMooncakeLine,
} from './trace-parse.js';

const conv = (line: number) => ({ file: 'azure-llm-2023-conv.csv', line });
const moon = (line: number) => ({ file: 'mooncake-conversation-sample.jsonl', line });

describe('Azure LLM 2023 lines', () => {
  it('read the real header, CRLF and all', () => {
    expect(parseAzureHeader('TIMESTAMP,ContextTokens,GeneratedTokens\r', conv(1))).toEqual(
      AZURE_DEFAULT_COLUMNS,
    );
  });

  it('find the columns by name in another order', () => {
    const cols = parseAzureHeader('GeneratedTokens,TIMESTAMP,ContextTokens', conv(1));
    expect(parseAzureLine('44,2023-11-16 18:15:46.6805900,374', conv(2), cols)).toMatchObject({
      contextTokens: 374,
      generatedTokens: 44,
    });
  });

  it('parse the first data line of the conv trace exactly, keeping all 7 decimals', () => {
    const row = parseAzureLine('2023-11-16 18:15:46.6805900,374,44\r', conv(2));
    expect(row).toEqual({
      timestampSec: Date.UTC(2023, 10, 16, 18, 15, 46) / 1000,
      timestampTicks: 6_805_900,
      contextTokens: 374,
      generatedTokens: 44,
    });
    expect(azureStamp(row)).toBe('2023-11-16 18:15:46.6805900');
  });

  it('normalise the first lines of the conv trace to ms after the first row', () => {
    const normalise = azureNormaliser();
    const lines = [
      '2023-11-16 18:15:46.6805900,374,44',
      '2023-11-16 18:15:50.9951690,396,109',
      '2023-11-16 18:15:51.2224670,879,55',
    ];
    expect(lines.map((l, i) => normalise(parseAzureLine(l, conv(i + 2)), conv(i + 2)))).toEqual([
      { atMs: 0, promptTokens: 374, outputTokens: 44, line: 2 },
      { atMs: 4314.579, promptTokens: 396, outputTokens: 109, line: 3 },
      { atMs: 4541.877, promptTokens: 879, outputTokens: 55, line: 4 },
    ]);
  });

  it('accept fewer decimals, padding them to 100 ns ticks', () => {
    expect(parseAzureLine('2023-11-16 18:15:46.5,1,2', conv(2)).timestampTicks).toBe(5_000_000);
    expect(parseAzureLine('2023-11-16 18:15:46,1,2', conv(2)).timestampTicks).toBe(0);
  });

  it('give an error naming file, line, field, value and expectation for a bad token count', () => {
    expect(() => parseAzureLine('2023-11-16 18:15:46.6805900,37x,44', conv(7))).toThrow(
      "azure-llm-2023-conv.csv:7: ContextTokens is '37x', expected a non-negative integer",
    );
    expect(() => parseAzureLine('2023-11-16 18:15:46.6805900,374,-1', conv(8))).toThrow(
      "azure-llm-2023-conv.csv:8: GeneratedTokens is '-1', expected a non-negative integer",
    );
  });

  it('give an error for a bad timestamp and for a missing column', () => {
    expect(() => parseAzureLine('2023-11-31 18:15:46.6805900,374,44', conv(3))).toThrow(
      "azure-llm-2023-conv.csv:3: TIMESTAMP is '2023-11-31 18:15:46.6805900', expected a time like '2023-11-16 18:15:46.6805900'",
    );
    expect(() => parseAzureLine('2023-11-16 18:15:46.6805900,374', conv(4))).toThrow(
      "azure-llm-2023-conv.csv:4: row is '2023-11-16 18:15:46.6805900,374', expected 3 comma-separated fields",
    );
    expect(() => parseAzureHeader('time,ContextTokens,GeneratedTokens', conv(1))).toThrow(
      "azure-llm-2023-conv.csv:1: header is 'time,ContextTokens,GeneratedTokens', expected the columns TIMESTAMP,ContextTokens,GeneratedTokens",
    );
  });

  it('carry the fields of the error as properties', () => {
    try {
      parseAzureLine('2023-11-16 18:15:46.6805900,374,x', conv(9));
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TraceFormatError);
      expect(e).toMatchObject({
        code: 'SLUICE_E_TRACE_FORMAT',
        file: 'azure-llm-2023-conv.csv',
        line: 9,
        field: 'GeneratedTokens',
        value: 'x',
        expected: 'a non-negative integer',
      });
    }
  });

  it('reject a row earlier than the one before it', () => {
    const normalise = azureNormaliser();
    normalise(parseAzureLine('2023-11-16 18:15:46.6805900,374,44', conv(2)), conv(2));
    expect(() => normalise(parseAzureLine('2023-11-16 18:15:46.6805899,1,1', conv(3)), conv(3))).toThrow(
      "azure-llm-2023-conv.csv:3: TIMESTAMP is '2023-11-16 18:15:46.6805899', expected a time not before the previous row (2023-11-16 18:15:46.6805900)",
    );
  });
});

describe('Mooncake lines', () => {
  const first =
    '{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}';

  it('parse the first line of the conversation trace exactly', () => {
    expect(parseMooncakeLine(first, moon(1))).toEqual({
      timestampMs: 0,
      inputLength: 6758,
      outputLength: 500,
      hashIds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
    });
  });

  it('normalise to records with prefix blocks, times relative to the first line', () => {
    const normalise = mooncakeNormaliser();
    normalise(
      parseMooncakeLine(
        '{"timestamp": 3000, "input_length": 1, "output_length": 1, "hash_ids": []}',
        moon(1),
      ),
      moon(1),
    );
    const last = '{"timestamp": 987000, "input_length": 900, "output_length": 50, "hash_ids": [0, 55286]}';
    expect(normalise(parseMooncakeLine(last, moon(2)), moon(2))).toEqual({
      atMs: 984_000,
      promptTokens: 900,
      outputTokens: 50,
      prefixHashIds: [0, 55286],
      line: 2,
    });
  });

  it('give an error naming the field for a wrong or missing value', () => {
    expect(() =>
      parseMooncakeLine('{"timestamp": 0, "input_length": "12", "output_length": 5}', moon(4)),
    ).toThrow(
      `mooncake-conversation-sample.jsonl:4: input_length is '"12"', expected a non-negative integer`,
    );
    expect(() => parseMooncakeLine('{"timestamp": 0, "input_length": 12}', moon(5))).toThrow(
      'mooncake-conversation-sample.jsonl:5: output_length is missing, expected a non-negative integer',
    );
    expect(() =>
      parseMooncakeLine('{"timestamp": -5, "input_length": 1, "output_length": 1}', moon(6)),
    ).toThrow("mooncake-conversation-sample.jsonl:6: timestamp is '-5', expected a number of ms >= 0");
    expect(() =>
      parseMooncakeLine(
        '{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, "a"]}',
        moon(7),
      ),
    ).toThrow(
      `mooncake-conversation-sample.jsonl:7: hash_ids is '[1,"a"]', expected a list of non-negative integers`,
    );
  });

  it('give an error for a line that is not a JSON object', () => {
    expect(() => parseMooncakeLine('{"timestamp": 0,', moon(3))).toThrow(
      `mooncake-conversation-sample.jsonl:3: line is '{"timestamp": 0,', expected a JSON object`,
    );
    expect(() => parseMooncakeLine('[1,2]', moon(3))).toThrow("line is '[1,2]', expected a JSON object");
  });
});

describe('Azure timestamps without the Date object', () => {
  it('accepts 29 February only in leap years and round-trips stamps across years', () => {
    const ref = { file: 'x.csv', line: 2 };
    for (const stamp of [
      '2024-02-29 23:59:59.9999999',
      '2000-02-29 00:00:00.0000000',
      '1999-12-31 12:34:56.0000001',
    ]) {
      expect(azureStamp(parseAzureLine(`${stamp},1,1`, ref))).toBe(stamp);
    }
    for (const bad of [
      '2023-02-29 00:00:00.0',
      '1900-02-29 00:00:00.0',
      '2023-04-31 00:00:00.0',
      '2023-13-01 00:00:00.0',
    ]) {
      expect(() => parseAzureLine(`${bad},1,1`, ref)).toThrow(/TIMESTAMP/);
    }
  });
});
