import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScenarioText } from '../scenario/load.js';
import { REPO_ROOT } from '../scenario/resolve.js';
import { runScenario } from './run.js';
import { MemorySink } from './sinks.js';

describe('the SMG dialect in a run', () => {
  it("answers sheds as SMG does: 429 admission_queue_full, never the loxilb gate's codes", async () => {
    const text = readFileSync(join(REPO_ROOT, 'scenarios', 'smg-dialect.yaml'), 'utf8')
      .replace('rate_per_sec: 32 }', 'rate_per_sec: 45 }')
      .replace(/duration_s: \d+/, 'duration_s: 60');
    const sink = new MemorySink(true);
    const s = await runScenario(parseScenarioText(text, 'smg.yaml'), { sink });
    expect(Object.keys(s.sheds)).toEqual(['429 admission_queue_full']);
    expect(
      sink.requests.filter((r) => r.outcome === 'shed').every((r) => r.error === 'admission_queue_full'),
    ).toBe(true);
  });
});
