import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scenario/data-files.js';
import { parseScenarioText } from '../scenario/load.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

describe('the SMG dialect in a run', () => {
  it("answers sheds as SMG does: 429 admission_queue_full, never the loxilb gate's codes", async () => {
    const text = readFileSync(join(REPO_ROOT, 'scenarios', 'smg-dialect.yaml'), 'utf8')
      .replace('rate_per_sec: 32 }', 'rate_per_sec: 45 }')
      .replace(/duration_s: \d+/, 'duration_s: 60');
    const sink = new MemorySink(true);
    const s = await runScenario(parseScenarioText(text, 'smg.yaml'), { sink });
    // With engines that slow down under load (the fidelity-checked step model), this
    // overload also times some waiters out: SMG's 503, still never a loxilb gate code.
    const smg = ['429 admission_queue_full', '503 admission_queue_timeout'];
    expect(Object.keys(s.sheds)).toContain('429 admission_queue_full');
    for (const k of Object.keys(s.sheds)) expect(smg).toContain(k);
    expect(
      sink.requests
        .filter((r) => r.outcome === 'shed')
        .every((r) => r.error === 'admission_queue_full' || r.error === 'admission_queue_timeout'),
    ).toBe(true);
  });
});
