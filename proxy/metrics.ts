/**
 * The proxy's own metric families, next to the gate's: the accept valve
 * (`loxilb_proxy_context_inflight`, `loxilb_proxy_accept_bound`,
 * `loxilb_proxy_accept_blocked_total`), client faults met before a request
 * reached the gate, and finished exchanges by outcome.
 */
import type { Family } from '../gate/index.js';
import type { AcceptValve } from './accept-valve.js';
import type { DecisionRecord, DecisionSink } from './decision-log.js';
import type { ClientFault } from './listener.js';

/** Counters the proxy keeps beside the gate's. */
export class ProxyCounters {
  readonly faults: Record<ClientFault, number> = {
    malformed: 0,
    headers_too_large: 0,
    headers_timeout: 0,
    reset: 0,
    idle_timeout: 0,
  };
  /** Errors that escaped an exchange's code (each failed that exchange alone, 500 `internal_error`). */
  internalErrors = 0;
  /** Finished exchanges by service and outcome. */
  readonly outcomes = new Map<string, number>();

  fault(kind: ClientFault): void {
    this.faults[kind]++;
  }

  record(r: DecisionRecord): void {
    const k = `${r.service}\u0000${r.outcome}`;
    this.outcomes.set(k, (this.outcomes.get(k) ?? 0) + 1);
  }
}

function gauge(name: string, help: string, value: number): Family {
  return { name, type: 'gauge', help, samples: [{ name, labels: {}, value }] };
}

/** The accept valve's families. */
export function valveFamilies(v: AcceptValve): Family[] {
  return [
    gauge(
      'loxilb_proxy_context_inflight',
      'Connection contexts held, client and backend legs alike; 0 while the valve is unbounded.',
      v.bound > 0 ? v.inflight : 0,
    ),
    gauge('loxilb_proxy_accept_bound', 'The accept valve bound; 0 when unbounded.', v.bound),
    {
      name: 'loxilb_proxy_accept_blocked_total',
      type: 'counter',
      help: 'Times the valve paused accepting at the bound: one per pause, not per connection.',
      samples: [{ name: 'loxilb_proxy_accept_blocked_total', labels: {}, value: v.blockedTotal }],
    },
  ];
}

/** The proxy counters' families. */
export function counterFamilies(c: ProxyCounters): Family[] {
  const faults: Family = {
    name: 'loxilb_proxy_client_faults_total',
    type: 'counter',
    help: 'Client connections ended before a request reached the gate, by kind.',
    samples: Object.entries(c.faults).map(([kind, value]) => ({
      name: 'loxilb_proxy_client_faults_total',
      labels: { kind },
      value,
    })),
  };
  const outcomes: Family = {
    name: 'loxilb_proxy_requests_total',
    type: 'counter',
    help: 'Finished requests per service and outcome (completed, shed, timed_out, cancelled, drained, failed).',
    samples: [...c.outcomes.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, value]) => {
        const [service, outcome] = k.split('\u0000') as [string, string];
        return { name: 'loxilb_proxy_requests_total', labels: { service, outcome }, value };
      }),
  };
  const internal: Family = {
    name: 'loxilb_proxy_internal_errors_total',
    type: 'counter',
    help: 'Errors that escaped the code of one request; that request alone was failed with 500 internal_error.',
    samples: [{ name: 'loxilb_proxy_internal_errors_total', labels: {}, value: c.internalErrors }],
  };
  return [faults, outcomes, internal];
}

/** The decision log's families (none without a log). */
export function decisionLogFamilies(log: DecisionSink | null): Family[] {
  if (log === null) return [];
  const name = 'decision_log_dropped_total';
  return [
    {
      name,
      type: 'counter',
      help: 'Decision records dropped because the log file did not keep up (or failed).',
      samples: [{ name, labels: {}, value: log.dropped }],
    },
  ];
}
