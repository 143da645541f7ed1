import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceFormatError } from './errors.js';
import {
  MAX_TRACE_LINE_CHARS,
  readAzureTrace,
  readLines,
  readMooncakeTrace,
  readTrace,
  tokenHistogramsOfFile,
  traceFormatOf,
} from './trace-files.js';
import type { TraceRecord } from './trace-parse.js';

// The public traces shipped in the repo's data/ (see data/SOURCES.md).
const data = (name: string): string => join('data', name);

async function collect(records: AsyncIterable<TraceRecord>): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}

describe('streaming the public traces', () => {
  it('reads the whole Azure conv trace: 19,366 requests over 3,501,721.937 ms, with exact token totals', async () => {
    let count = 0;
    let prompt = 0;
    let output = 0;
    let last: TraceRecord | undefined;
    for await (const r of readAzureTrace(data('azure-llm-2023-conv.csv'))) {
      count += 1;
      prompt += r.promptTokens;
      output += r.outputTokens;
      last = r;
    }
    expect(count).toBe(19_366);
    expect(prompt).toBe(22_361_870);
    expect(output).toBe(4_088_665);
    expect(last).toEqual({ atMs: 3_501_721.937, promptTokens: 197, outputTokens: 183, line: 19_367 });
  });

  it('reads the whole Azure code trace: 8,819 requests', async () => {
    let count = 0;
    for await (const _ of readAzureTrace(data('azure-llm-2023-code.csv'))) count += 1;
    expect(count).toBe(8819);
  });

  it('gives the first records of the conv trace exactly', async () => {
    expect(await collect(readAzureTrace(data('azure-llm-2023-conv.csv'), { limit: 2 }))).toEqual([
      { atMs: 0, promptTokens: 374, outputTokens: 44, line: 2 },
      { atMs: 4314.579, promptTokens: 396, outputTokens: 109, line: 3 },
    ]);
  });

  it('reads the Mooncake conversation sample: 3,000 requests, the last at 987,000 ms', async () => {
    const all = await collect(readTrace(data('mooncake-conversation-sample.jsonl')));
    expect(all).toHaveLength(3000);
    expect(all[0]).toEqual({
      atMs: 0,
      promptTokens: 6758,
      outputTokens: 500,
      prefixHashIds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
      line: 1,
    });
    expect(all[2999]).toEqual({
      atMs: 987_000,
      promptTokens: 900,
      outputTokens: 50,
      prefixHashIds: [0, 55286],
      line: 3000,
    });
  });

  it('stops early without reading the rest when the consumer breaks', async () => {
    let n = 0;
    for await (const _ of readMooncakeTrace(data('mooncake-synthetic-sample.jsonl'))) {
      n += 1;
      if (n === 5) break;
    }
    expect(n).toBe(5);
  });

  it('builds token histograms of a whole trace', async () => {
    const h = await tokenHistogramsOfFile(data('azure-llm-2023-conv.csv'));
    expect(h.count).toBe(19_366);
    const total = (w: readonly number[] | undefined) => (w ?? []).reduce((a, b) => a + b, 0);
    expect(total(h.prompt.weights)).toBe(19_366);
    expect(total(h.output.weights)).toBe(19_366);
    expect(h.output.values[0]).toBe(7);
    const weightedSum = h.output.values.reduce((a, v, i) => a + v * (h.output.weights?.[i] ?? 0), 0);
    expect(weightedSum).toBe(4_088_665);
  });
});

describe('trace files with errors', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-trace-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('report the file name and line of a malformed Azure row', async () => {
    const path = join(dir, 'bad.csv');
    await writeFile(
      path,
      'TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n\r\n2023-11-16 18:15:50.9951690,396,ten\r\n',
    );
    await expect(collect(readAzureTrace(path))).rejects.toThrow(
      "bad.csv:4: GeneratedTokens is 'ten', expected a non-negative integer",
    );
  });

  it('report a Mooncake line that goes back in time', async () => {
    const path = join(dir, 'back.jsonl');
    await writeFile(
      path,
      '{"timestamp": 10, "input_length": 1, "output_length": 1}\n{"timestamp": 5, "input_length": 1, "output_length": 1}\n',
    );
    await expect(collect(readMooncakeTrace(path, { name: 'trace.jsonl' }))).rejects.toThrow(
      "trace.jsonl:2: timestamp is '5', expected a time not before the previous line (10)",
    );
  });

  it('stop at a line longer than MAX_TRACE_LINE_CHARS, naming file and line', async () => {
    const path = join(dir, 'long.jsonl');
    const ok = '{"timestamp": 1, "input_length": 1, "output_length": 1}\n';
    await writeFile(path, `${ok}${ok}{"timestamp": 2, "pad": "${'x'.repeat(MAX_TRACE_LINE_CHARS)}"}\n${ok}`);
    const err = await collect(readMooncakeTrace(path, { name: 'trace.jsonl' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TraceFormatError);
    expect((err as TraceFormatError).message).toMatch(
      new RegExp(
        `^trace\\.jsonl:3: line is '.*', expected a line of at most ${MAX_TRACE_LINE_CHARS} characters`,
      ),
    );
    // Not skippable: a line that long is not read at all.
    await expect(collect(readMooncakeTrace(path, { skipBadLines: true }))).rejects.toThrow('long.jsonl:3:');
  });

  it('stop a file without line breaks once MAX_TRACE_LINE_CHARS is passed, not at its end', async () => {
    const path = join(dir, 'one-line.csv');
    await writeFile(path, `TIMESTAMP,ContextTokens,GeneratedTokens\n${'9'.repeat(4 * MAX_TRACE_LINE_CHARS)}`);
    await expect(collect(readAzureTrace(path, { name: 'az.csv' }))).rejects.toThrow(
      `az.csv:2: line is '${'9'.repeat(60)}', expected a line of at most ${MAX_TRACE_LINE_CHARS} characters`,
    );
  });

  it('split lines at \\n, \\r\\n and \\r, a \\r\\n across two chunks being one break', async () => {
    const path = join(dir, 'breaks.txt');
    // 64 KiB is the read stream's chunk: the \r ends the first chunk, its \n opens the second.
    const first = 'a'.repeat(64 * 1024 - 1);
    await writeFile(path, `${first}\r\nb\rc\n\nd`);
    const lines: { text: string; line: number }[] = [];
    for await (const l of readLines(path)) lines.push({ text: l.text.slice(0, 3), line: l.line });
    expect(lines).toEqual([
      { text: 'aaa', line: 1 },
      { text: 'b', line: 2 },
      { text: 'c', line: 3 },
      { text: '', line: 4 },
      { text: 'd', line: 5 },
    ]);
  });

  it('reject a missing file with the system error', async () => {
    await expect(collect(readAzureTrace(join(dir, 'nope.csv')))).rejects.toThrow('ENOENT');
  });

  it('tell the format by extension', () => {
    expect(traceFormatOf('x/AzureLLMInferenceTrace_conv.CSV')).toBe('azure');
    expect(traceFormatOf('conversation_trace.jsonl')).toBe('mooncake');
    expect(traceFormatOf('trace.txt')).toBeUndefined();
    expect(() => readTrace('trace.txt')).toThrow('trace.txt: unknown trace format');
  });
});
