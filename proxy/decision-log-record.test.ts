/**
 * The decision log has one record shape and one vocabulary (`sim/clients/decision-record.ts`):
 * what the proxy's log writes, the simulator's decision-log reader reads back, for every
 * decision the log can carry.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseDecisionLogLine } from '../sim/clients/decision-log.js';
import { LOG_DECISIONS } from '../sim/clients/decision-record.js';
import { type DecisionRecord, JsonlDecisionLog } from './decision-log.js';

function record(over: Partial<DecisionRecord>): DecisionRecord {
  return {
    time: '2026-11-30T12:00:00.250Z',
    service: '10.0.0.1:80',
    tenant: 'acme',
    decision: 'admit',
    reason: 'admitted',
    outcome: 'completed',
    status: 200,
    error: null,
    method: 'POST',
    path: '/v1/chat/completions',
    protocol: 'h2',
    endpoint: '10.0.1.1:8000',
    queued_ms: 12,
    ttft_ms: 40,
    duration_ms: 900,
    prompt_tokens: 128,
    output_tokens: 64,
    ...over,
  };
}

describe('the decision log record', () => {
  it('is read back by the simulator as the proxy wrote it, for every decision it can carry', async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
    const log = new JsonlDecisionLog(out);
    for (const decision of LOG_DECISIONS) log.write(record({ decision }));
    log.write(
      record({ tenant: null, ttft_ms: null, prompt_tokens: null, output_tokens: null, queued_ms: null }),
    );
    await log.close();
    const lines = chunks.join('').trimEnd().split('\n');
    expect(lines).toHaveLength(LOG_DECISIONS.length + 1);
    const rows = lines.map((l, i) => parseDecisionLogLine(l, { file: 'log.jsonl', line: i + 1 }));
    expect(rows[0]).toEqual({
      arrivalMs: Date.parse('2026-11-30T12:00:00.250Z'),
      tenant: 'acme',
      inference: true,
      protocol: 'h2',
      outcome: 'completed',
      queuedMs: 12,
      ttftMs: 40,
      durationMs: 900,
      promptTokens: 128,
      outputTokens: 64,
    });
    expect(rows.find((_, i) => LOG_DECISIONS[i] === 'bypass')?.inference).toBe(false);
    expect(rows.at(-1)).toMatchObject({
      tenant: undefined,
      queuedMs: 0,
      ttftMs: undefined,
      promptTokens: undefined,
      outputTokens: undefined,
    });
  });

  it('names, in the reader, every decision the writer may log when a line has another', () => {
    expect(() =>
      parseDecisionLogLine(JSON.stringify(record({ decision: 'maybe' as never })), {
        file: 'log.jsonl',
        line: 3,
      }),
    ).toThrow(LOG_DECISIONS.join(', '));
  });
});
