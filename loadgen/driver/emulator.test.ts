/**
 * One run against the emulated vLLM server (`loadgen/emulator`, when present): the driver's
 * payloads are accepted, streams are read to `[DONE]` with the full output, and TTFT comes from
 * the engine model.
 */
import { describe, expect, it } from 'vitest';
import { run, setupOf } from './test/helpers.js';

interface Emu {
  url: string;
  close(): Promise<void>;
}
type Start = (o: Record<string, unknown>) => Promise<Emu>;

const mod = (await import('../emulator/emulator.js').catch(() => ({}))) as { startEmulator?: Start };

describe.skipIf(mod.startEmulator === undefined)('against the emulated engine', () => {
  it('completes streamed and plain requests with their full output', async () => {
    const emu = await mod.startEmulator!({ profile: 'llama-3.1-8b-h100' });
    try {
      const r = await run(
        emu.url,
        setupOf({
          arrival: { kind: 'constant', ratePerSec: 20, durationMs: 1000 },
          prompt: 64,
          output: 8,
          stream: 0.5,
          ttftSloMs: 2000,
        }),
        1000,
        { graceMs: 2000 },
      );
      expect(r.summary.attempts).toBe(20);
      expect(r.summary.outcomes.completed).toBe(20);
      expect(r.summary.good).toBe(20);
      for (const q of r.sink.requests) {
        expect(q.generated_tokens).toBe(8);
        expect(Number(q.ttft_ms)).toBeGreaterThan(0);
      }
      expect(r.itl_ms.count).toBeGreaterThan(0);
    } finally {
      await emu.close();
    }
  });
});
