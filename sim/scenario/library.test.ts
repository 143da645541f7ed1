import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toClientConfig } from './client-config.js';
import { loadScenario } from './load.js';
import { SCENARIOS_DIR, scenarioFiles } from './write-schema.js';

const REQUIRED = [
  'default.yaml',
  'spike.yaml',
  'ramp-past-saturation.yaml',
  'noisy-tenant.yaml',
  'noisy-tenant-with-share.yaml',
  'flapping-endpoints-warmup.yaml',
  'stale-scrapes-frozen.yaml',
  'half-capacity-loss.yaml',
  'provider-slowdown.yaml',
  'long-context-shift.yaml',
  'synchronised-retries.yaml',
  'cancellations.yaml',
  'maintenance-drain.yaml',
  'raise-ceiling-at-runtime.yaml',
  'pd-pool.yaml',
  'http2-mix.yaml',
  'smg-dialect.yaml',
  'azure-conv-replay.yaml',
  'mmc-check.yaml',
  'mmck-check.yaml',
  // issue #19: the essay's worked example, plain FIFO and policy
  'worked-example-fifo.yaml',
  'worked-example-policy.yaml',
  // and its cliffs the simulator can express
  'policy-priority-abuse.yaml',
  'policy-cold-failover.yaml',
  'policy-deferred-backlog-recovery.yaml',
  'policy-cost-underestimation.yaml',
  'policy-queue-store-failure.yaml',
];

describe('the scenario library', () => {
  const files = scenarioFiles();

  it('holds every scenario the simulator issue asks for', () => {
    expect(files).toEqual(expect.arrayContaining(REQUIRED));
  });

  it.each(files)('%s validates, keeps a modest length and maps to client configs', async (file) => {
    const s = await loadScenario(join(SCENARIOS_DIR, file), { cwd: SCENARIOS_DIR });
    expect(s.name).toBe(file.replace(/\.yaml$/, ''));
    expect(s.duration_s).toBeGreaterThanOrEqual(60);
    expect(s.duration_s).toBeLessThanOrEqual(300);
    expect(s.description.length).toBeGreaterThan(20);
    expect(() => toClientConfig(s)).not.toThrow();
  });

  it.each(files)('%s points editors at the schema and says what it demonstrates', (file) => {
    const lines = readFileSync(join(SCENARIOS_DIR, file), 'utf8').split('\n');
    expect(lines[0]).toBe('# yaml-language-server: $schema=./scenario.schema.json');
    const comment = lines.slice(1).filter((l) => l.startsWith('#'));
    expect(comment.join(' ')).toMatch(/Demonstrates|check/);
  });
});
