/**
 * `npm run bench:policy [-- --json]`: admit+release pairs per second of the policy core (a policy
 * of 4 classes, requests from 64 tenants round-robin, far from saturation), beside the plain gate's
 * uncontended pairs measured the same way in the same run (as bench/gate.bench.ts does), and the
 * policy host (PolicyGate: leases, queues, scorecard) on the same load, the three interleaved per
 * round. Reports the ratios and whether the target of 1 M pairs/s was met on this machine, for
 * the core and for the host: `met` when every run reached it, `missed` when none did,
 * `unresolved` when the runs straddle it (a noisy machine).
 */
import { performance } from 'node:perf_hooks';
import type { AdmissionEnvelope } from '../gate/index.js';
import { Gate, ManualClock, PolicyCore, PolicyGate, parsePolicy } from '../gate/index.js';
import { median } from './proxy/measure.js';

const KEY = '192.0.2.10:8080/tcp';
const RUNS = 7;
const TARGET = 1_000_000;

const POLICY = `version: 1
capacity_seats: 1000
reserve: { seats: 8 }
classes:
${['interactive', 'work-order', 'batch', 'eval']
  .map(
    (name, i) => `  ${name}:
    priority: ${100 - i * 20}
    guaranteed_seats: 240
    lendable_pct: 50
    borrow: { allowed: true, max_seats: 100 }
    tenant_max_share_pct: 25
    queue: { max_count: 64, max_age_ms: 2000, max_cost_seats: 256 }
    deadline: { default_ms: 30000 }
    estimator: { min_seats: 1, max_seats: 4 }`,
  )
  .join('\n')}
envelope: { default_class: interactive }
`;

function plainGate(pairs: number): number {
  const gate = new Gate({ clock: new ManualClock() });
  gate.apply({
    serviceArguments: {
      externalIP: '192.0.2.10',
      port: 8080,
      protocol: 'tcp',
      mode: 4,
      sse_mode: true,
      fc_mode: 'enforce',
      fc_max_outstanding: 1000,
      fc_ep_max_inflight: 600,
      fc_max_queue_depth: 64,
    },
    endpoints: [
      { endpointIP: '198.51.100.11', targetPort: 8000, weight: 1 },
      { endpointIP: '198.51.100.12', targetPort: 8000, weight: 1 },
    ],
  });
  const req = { tenant: undefined };
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) {
    const d = gate.admit(KEY, req);
    if (d.kind !== 'admit') throw new Error('expected admit');
    d.permit.release();
  }
  return pairs / ((performance.now() - t0) / 1000);
}

const policy = parsePolicy(POLICY, 'bench-policy.yaml');

function policyCore(pairs: number): number {
  const clock = new ManualClock();
  const core = new PolicyCore(policy, clock);
  const envs = envelopes();
  const n = envs.length;
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) {
    const d = core.decide(envs[i % n]!);
    if (d.kind !== 'admit') throw new Error(`expected admit, got ${d.kind}`);
    core.release(d.grant);
  }
  const dt = (performance.now() - t0) / 1000;
  if (core.seats.inUse !== 0) throw new Error('seats left in use');
  return pairs / dt;
}

function envelopes(): AdmissionEnvelope[] {
  const envs: AdmissionEnvelope[] = [];
  for (let t = 0; t < 64; t++)
    for (const c of policy.classes)
      envs.push({
        className: c.name,
        tenant: `tenant-${t}`,
        deadlineMs: 1e12,
        consequence: 'none',
        cost: { promptTokens: 1500, maxOutputTokens: 500 },
      });
  return envs;
}

/** The policy host (gate/policy/host.ts): submit + release with its leases, queues and scorecard. */
function policyHost(pairs: number): number {
  const clock = new ManualClock();
  const host = new PolicyGate<number>({
    policy,
    clock,
    events: {
      onDispatch: () => {
        throw new Error('nothing should queue');
      },
      onExpire: () => {
        throw new Error('nothing should queue');
      },
      onDrain: () => undefined,
    },
  });
  const envs = envelopes();
  const n = envs.length;
  const done = { outcome: 'completed' as const };
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) {
    const a = host.submit(envs[i % n]!, i);
    if (a.kind !== 'admit') throw new Error(`expected admit, got ${a.kind}`);
    host.release(a.lease, done);
  }
  const dt = (performance.now() - t0) / 1000;
  if (host.core.seats.inUse !== 0 || host.leases !== 0) throw new Error('seats left in use');
  return pairs / dt;
}

function main(): void {
  const json = process.argv.includes('--json');
  plainGate(200_000);
  policyCore(200_000);
  policyHost(200_000);
  const g: number[] = [];
  const p: number[] = [];
  const h: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    g.push(plainGate(1_000_000));
    p.push(policyCore(1_000_000));
    h.push(policyHost(1_000_000));
  }
  const gate = Math.round(median(g));
  const pol = Math.round(median(p));
  const hst = Math.round(median(h));
  const ratio = pol / gate;
  const hostRatio = hst / gate;
  const verdict = (xs: number[]) =>
    Math.min(...xs) >= TARGET ? 'met' : Math.max(...xs) < TARGET ? 'missed' : 'unresolved';
  const out = {
    plain_gate_pairs_per_s: gate,
    policy_pairs_per_s: pol,
    ratio_to_plain_gate: Number(ratio.toFixed(3)),
    host_pairs_per_s: hst,
    host_ratio_to_plain_gate: Number(hostRatio.toFixed(3)),
    target_pairs_per_s: TARGET,
    target: verdict(p),
    host_target: verdict(h),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  const fmt = (x: number) => x.toLocaleString('en-US');
  process.stdout.write(
    [
      `policy benchmark (node ${process.version}, one thread, median of ${RUNS} interleaved runs)`,
      `  plain gate, uncontended admit+release:   ${fmt(gate)} pairs/s`,
      `  policy core, 4 classes, 64 tenants:      ${fmt(pol)} pairs/s`,
      `  policy host, 4 classes, 64 tenants:      ${fmt(hst)} pairs/s`,
      `  ratio policy core / plain gate:          ${ratio.toFixed(3)}`,
      `  ratio policy host / plain gate:          ${hostRatio.toFixed(3)}`,
      `  target >= ${fmt(TARGET)} core pairs/s:    ${out.target} (runs ${fmt(Math.round(Math.min(...p)))} to ${fmt(Math.round(Math.max(...p)))})`,
      `  target >= ${fmt(TARGET)} host pairs/s:    ${out.host_target} (runs ${fmt(Math.round(Math.min(...h)))} to ${fmt(Math.round(Math.max(...h)))})`,
      '',
    ].join('\n'),
  );
}

main();
