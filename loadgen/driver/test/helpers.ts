/** Test helpers: a load setup built by hand and a run of it against a backend. */
import type { ArrivalConfig } from '../../../sim/clients/arrivals.js';
import type { RetryConfig } from '../../../sim/clients/retry.js';
import type { LoadSetup } from '../../../sim/clients/schedule.js';
import type { TenantConfig } from '../../../sim/clients/tenants.js';
import { MemorySink } from '../../../sim/run/sinks.js';
import { type LoadResult, runLoad } from '../driver.js';

export interface SetupOptions {
  arrival?: ArrivalConfig;
  tenants?: TenantConfig[];
  retry?: RetryConfig;
  apiKeys?: Record<string, string>;
  output?: number;
  prompt?: number;
  stream?: number;
  h2?: number;
  deadlineMs?: number;
  ttftSloMs?: number;
}

/** A setup: fixed token counts, the given arrivals, tenants and retry policy. */
export function setupOf(o: SetupOptions): LoadSetup {
  return {
    workload: {
      ...(o.arrival ? { arrival: o.arrival } : {}),
      ...(o.tenants ? { tenants: o.tenants } : {}),
      promptTokens: { kind: 'fixed', value: o.prompt ?? 8 },
      outputTokens: { kind: 'fixed', value: o.output ?? 3 },
      streamShare: o.stream ?? 1,
      h2Share: o.h2 ?? 0,
      ...(o.deadlineMs ? { deadlineMs: o.deadlineMs } : {}),
      ...(o.ttftSloMs ? { ttftSloMs: o.ttftSloMs } : {}),
    },
    retry: o.retry ?? { kind: 'none' },
    apiKeys: o.apiKeys ?? {},
    shifts: [],
  };
}

/** Runs `setup` for `endMs` against `target`, keeping every record and row. */
export async function run(
  target: string,
  setup: LoadSetup,
  endMs: number,
  extra: { graceMs?: number; warmupMs?: number } = {},
): Promise<LoadResult & { sink: MemorySink }> {
  const sink = new MemorySink(true);
  const r = await runLoad({
    target,
    setup,
    seed: 7,
    endMs,
    warmupMs: extra.warmupMs ?? 0,
    scenario: 'test',
    dialect: 'loxilb',
    ceilings: { max_outstanding: 0, queue_depth: 0, queue_wait_ms: 0 },
    sink,
    ...(extra.graceMs === undefined ? {} : { graceMs: extra.graceMs }),
  });
  return { ...r, sink };
}
