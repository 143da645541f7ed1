/**
 * The gate's metrics as plain data, with the spec's family names and labels,
 * and a renderer to the Prometheus text exposition format (0.0.4).
 */
import { ADAPT_REASONS, ADAPT_STATES } from './adaptive.js';
import { DECISION_REASONS } from './decisions.js';
import { modeNumber } from './effective.js';
import { ENDPOINT_ROLES } from './endpoints.js';
import type { Gate } from './gate.js';
import { QUEUE_WAIT_BUCKETS_MS } from './pool.js';

/** One sample: a family, its labels and a value. */
export interface Sample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** A metric family with its samples. */
export interface Family {
  name: string;
  /** `summary` families carry `_sum`/`_count` samples (and quantiles when any). */
  type: 'gauge' | 'counter' | 'histogram' | 'summary';
  help: string;
  samples: Sample[];
}

const P = 'loxilb_ai_admission_';

const HELP: Record<string, [Family['type'], string]> = {
  mode: ['gauge', 'Capacity gate mode on the pool: 0 off, 1 observe, 2 enforce.'],
  inflight: [
    'gauge',
    'Capacity units held: role="service" pool-wide, other roles summed over the endpoints.',
  ],
  limit: ['gauge', 'Ceiling in force per role; role="queue" is the depth; 0 means unlimited.'],
  queued: ['gauge', 'Inference requests waiting for a unit on the pool.'],
  queue_wait_seconds: ['histogram', 'Time resumed requests waited in the queue.'],
  decisions_total: ['counter', 'Gate decisions per pool and reason.'],
  effective_limit: [
    'gauge',
    'The pool-wide ceiling in force: the adaptive one while adapting; 0 means unlimited.',
  ],
  adapt_state: ['gauge', 'Adaptive ceiling state, 1 for the current one: off, open, tightened, frozen.'],
  adapt_reason: ['gauge', 'Why the adaptive ceiling last moved or holds, 1 for the current reason.'],
  adapt_moves_total: ['counter', 'Steps of the adaptive ceiling, down to four fifths or up by one.'],
  warming_endpoints: ['gauge', 'Endpoints of the pool inside their warm-up window.'],
  tenants_active: ['gauge', 'Tenants holding or waiting for a unit, counted while a share is in force.'],
  anomalies_total: [
    'counter',
    'Bookkeeping anomalies: underflow and unknown_permit are defects; tenant_table_full is load.',
  ],
};

/** Builds every family from the gate's current state. */
export function collect(gate: Gate): Family[] {
  const fam = new Map<string, Family>();
  const add = (short: string, labels: Record<string, string>, value: number, suffix = ''): void => {
    let f = fam.get(short);
    if (!f) {
      const [type, help] = HELP[short]!;
      f = { name: P + short, type, help, samples: [] };
      fam.set(short, f);
    }
    f.samples.push({ name: P + short + suffix, labels, value });
  };
  const now = gate.clock.now();
  const pools = gate.pools().sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0));
  for (const { service, pool } of pools) {
    const l = { service, pool: '-' };
    add('mode', l, modeNumber(pool));
    const gating = pool.cfg.mode !== 'off';
    add('inflight', { ...l, role: 'service' }, gating ? pool.inflight : 0);
    add('limit', { ...l, role: 'service' }, pool.cfg.maxOutstanding);
    for (const role of ENDPOINT_ROLES) {
      let held = 0;
      for (const ep of pool.endpoints) if (ep.role === role) held += ep.inflight;
      add('inflight', { ...l, role }, gating ? held : 0);
      add('limit', { ...l, role }, pool.roleCap(role));
    }
    add('limit', { ...l, role: 'queue' }, pool.cfg.queueDepth);
    add('queued', l, pool.queue.length);
    let cum = 0;
    QUEUE_WAIT_BUCKETS_MS.forEach((ms, i) => {
      cum += pool.queueWaitBuckets[i]!;
      add('queue_wait_seconds', { ...l, le: String(ms / 1000) }, cum, '_bucket');
    });
    add('queue_wait_seconds', { ...l, le: '+Inf' }, pool.queueWaitCount, '_bucket');
    add('queue_wait_seconds', l, pool.queueWaitSumMs / 1000, '_sum');
    add('queue_wait_seconds', l, pool.queueWaitCount, '_count');
    DECISION_REASONS.forEach((reason, i) => {
      add('decisions_total', { ...l, reason }, pool.decisions[i]!);
    });
    add('effective_limit', l, pool.effective);
    for (const s of ADAPT_STATES) add('adapt_state', { ...l, state: s }, pool.adaptState === s ? 1 : 0);
    for (const r of ADAPT_REASONS) add('adapt_reason', { ...l, reason: r }, pool.adaptReason === r ? 1 : 0);
    add('adapt_moves_total', { ...l, direction: 'down' }, pool.adaptMovesDown);
    add('adapt_moves_total', { ...l, direction: 'up' }, pool.adaptMovesUp);
    add('warming_endpoints', l, pool.warmingEndpoints(now));
    add('tenants_active', l, pool.shareActive ? pool.tenants.active : 0);
  }
  const a = gate.anomalies;
  add('anomalies_total', { kind: 'underflow' }, a.underflow);
  add('anomalies_total', { kind: 'unknown_permit' }, a.unknown_permit);
  add('anomalies_total', { kind: 'tenant_table_full' }, a.tenant_table_full);
  return [...fam.values()];
}

/** Escapes a label value per the text exposition format: backslash, newline, double quote. */
export function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** Escapes a HELP text per the text exposition format: backslash and newline. */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function fmt(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/** Renders families in the Prometheus text exposition format. */
export function renderPrometheus(families: readonly Family[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`);
    out.push(`# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const keys = Object.keys(s.labels);
      const labels =
        keys.length === 0 ? '' : `{${keys.map((k) => `${k}="${escapeLabel(s.labels[k]!)}"`).join(',')}}`;
      out.push(`${s.name}${labels} ${fmt(s.value)}`);
    }
  }
  return `${out.join('\n')}\n`;
}
