/**
 * Empirical token-count distributions built from trace records in one pass. Memory grows with the
 * number of distinct token counts, not with the number of records.
 */
import type { EmpiricalDistributionConfig } from './distributions.js';
import type { TraceRecord } from './trace-parse.js';

/** Prompt and output token histograms of a trace, as empirical distribution configs. */
export interface TokenHistograms {
  /** Prompt tokens: distinct values ascending, weights = occurrences. */
  prompt: EmpiricalDistributionConfig;
  /** Output tokens: distinct values ascending, weights = occurrences. */
  output: EmpiricalDistributionConfig;
  /** Records read. */
  count: number;
}

/** Counts prompt and output token values over `records` (sync or async). */
export async function tokenHistograms(
  records: AsyncIterable<TraceRecord> | Iterable<TraceRecord>,
): Promise<TokenHistograms> {
  const prompt = new Map<number, number>();
  const output = new Map<number, number>();
  let count = 0;
  for await (const r of records) {
    prompt.set(r.promptTokens, (prompt.get(r.promptTokens) ?? 0) + 1);
    output.set(r.outputTokens, (output.get(r.outputTokens) ?? 0) + 1);
    count += 1;
  }
  return { prompt: toEmpirical(prompt), output: toEmpirical(output), count };
}

function toEmpirical(counts: Map<number, number>): EmpiricalDistributionConfig {
  const values = [...counts.keys()].sort((a, b) => a - b);
  return { kind: 'empirical', values, weights: values.map((v) => counts.get(v) ?? 0) };
}
