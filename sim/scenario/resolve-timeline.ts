/**
 * The timeline part of a scenario's normal form: events checked against the duration and each
 * other's order, endpoint selectors resolved to pool indexes (those of an engine event with
 * `pool` against that fallback pool's endpoints), each `replace` made into the full
 * rule to POST (checked by the gate's own parser), and the telemetry outages' selectors resolved.
 */
import { endpointId, isGateError, parseRule } from '../../gate/index.js';
import { fieldPath } from './gate-section.js';
import { detailAfterField } from './issues.js';
import type {
  LoxilbGate,
  Path,
  PoolEndpoint,
  Reporter,
  RuleEndpointInput,
  RuleInput,
  SmgGate,
  Telemetry,
  TimelineEvent,
} from './resolve.js';
import { type EndpointSelector, endpointSelector } from './resolve-engines.js';
import type { FallbackPool } from './resolve-fallback-pools.js';
import type { ScenarioFile, TimelineEventSpec } from './schema.js';
import { declaresToolTime } from './tool-time.js';

/** What the timeline's events are resolved against. */
export interface TimelineContext {
  /** Scenario length, in seconds: every event and outage starts before it. */
  duration_s: number;
  gate: LoxilbGate | SmgGate;
  endpoints: readonly PoolEndpoint[];
  select: EndpointSelector;
  /** `gate.fallback_pools` resolved; absent when the scenario declares none. */
  fallbackPools?: readonly FallbackPool[];
}

/** The telemetry section with each outage's endpoint selector resolved. */
export function resolveTelemetry(s: ScenarioFile, ctx: TimelineContext, report: Reporter): Telemetry {
  const duration = ctx.duration_s;
  return {
    ...s.telemetry,
    outages: s.telemetry.outages.map((o, i) => {
      if (o.at_s >= duration) {
        report(
          ['telemetry', 'outages', i, 'at_s'],
          o.at_s,
          `${o.at_s} is not below duration_s (${duration})`,
          `a time below duration_s (${duration})`,
        );
      }
      return {
        at_s: o.at_s,
        duration_s: o.duration_s,
        endpoints: ctx.select(o.endpoints, ['telemetry', 'outages', i, 'endpoints']),
      };
    }),
  };
}

/** The timeline in normal form, in the file's order. */
export function resolveTimeline(s: ScenarioFile, ctx: TimelineContext, report: Reporter): TimelineEvent[] {
  const { duration_s: duration, gate, endpoints, select } = ctx;
  const onPool = poolSelectors(ctx, report);
  const tenantIds = new Set((s.clients.tenants ?? []).map((t) => t.id).filter((id) => id !== undefined));
  let stored: RuleInput | undefined = gate.dialect === 'loxilb' ? gate.rule : undefined;
  let prevAt = 0;
  const resolveEvent = (ev: TimelineEventSpec, i: number): TimelineEvent => {
    const path: Path = ['timeline', i];
    if (ev.at_s >= duration) {
      report(
        [...path, 'at_s'],
        ev.at_s,
        `${ev.at_s} is not below duration_s (${duration})`,
        `a time below duration_s (${duration})`,
      );
    } else if (ev.at_s < prevAt) {
      report(
        [...path, 'at_s'],
        ev.at_s,
        `${ev.at_s} is before the previous event (${prevAt}); list events in time order`,
        `a time at or after ${prevAt}`,
      );
    }
    prevAt = Math.max(prevAt, ev.at_s);
    switch (ev.event) {
      case 'replace': {
        if (stored === undefined) {
          report(
            [...path, 'event'],
            ev.event,
            'needs gate.rule (SMG settings are not runtime settings)',
            'an event the gate dialect supports',
          );
          return { ...ev, rule: { serviceArguments: { ...ev.serviceArguments }, endpoints: [] } };
        }
        const post = replaceRule(ev, stored, endpoints, path, report);
        stored = post;
        return { ...ev, rule: post };
      }
      case 'maintenance':
        if (gate.dialect !== 'loxilb') {
          report(
            [...path, 'event'],
            ev.event,
            'needs gate.rule (the maintenance drain is a loxilb gateway feature)',
            'an event the gate dialect supports',
          );
        }
        return ev;
      case 'endpoint_down':
      case 'endpoint_up':
        return { ...ev, endpoints: onPool(ev.pool, path)(ev.endpoints, [...path, 'endpoints']) };
      case 'flap': {
        const down = ev.down_s ?? ev.period_s / 2;
        if (down >= ev.period_s) {
          report(
            [...path, 'down_s'],
            ev.down_s,
            `${down} is not below period_s (${ev.period_s})`,
            `a number below period_s (${ev.period_s})`,
          );
        }
        return {
          ...ev,
          down_s: down,
          endpoints: onPool(ev.pool, path)(ev.endpoints, [...path, 'endpoints']),
        };
      }
      case 'scrape_outage':
        return { ...ev, endpoints: select(ev.endpoints, [...path, 'endpoints']) };
      case 'engine_slowdown':
        return { ...ev, endpoints: onPool(ev.pool, path)(ev.endpoints, [...path, 'endpoints']) };
      case 'tool_slowdown':
        if (!declaresToolTime(s.clients)) {
          report(
            [...path, 'event'],
            ev.event,
            'slows tool calls, but no client spends tool time',
            'a client with tool_ms and envelope.tool_calls >= 1',
          );
        }
        return ev;
      case 'capacity_loss': {
        // The pool's endpoints in pool order (the main pool's, or the named fallback pool's).
        const all =
          ev.pool === undefined
            ? endpoints.map((e) => e.index)
            : onPool(ev.pool, path)(undefined, [...path, 'pool']);
        if (all.length === 0) return { ...ev, endpoints: [] };
        const k = Math.min(all.length, Math.max(1, Math.round(ev.share * all.length)));
        return { ...ev, endpoints: all.slice(all.length - k) };
      }
      case 'defer_store_outage':
        if (s.gate.policy === undefined) {
          report(
            [...path, 'event'],
            ev.event,
            `"${ev.event}" needs gate.policy (the defer store is the policy layer's); the scenario has none`,
            'gate.policy, or an event without it',
          );
        }
        return ev;
      case 'dependency_outage':
        // The name is checked against the policy's depends_on with the policy (policy-section.ts).
        if (s.gate.policy === undefined) {
          report(
            [...path, 'event'],
            ev.event,
            `"${ev.event}" needs gate.policy (a dependency is a class's depends_on in the policy); the scenario has none`,
            'gate.policy, or an event without it',
          );
        }
        return ev;
      case 'workload_shift':
        if (ev.tenant !== undefined && !tenantIds.has(ev.tenant)) {
          report(
            [...path, 'tenant'],
            ev.tenant,
            `"${ev.tenant}" is not a tenant of clients.tenants`,
            `one of the tenant ids${tenantIds.size ? `: ${[...tenantIds].join(', ')}` : ' (none listed)'}`,
          );
        }
        return ev;
    }
  };
  return s.timeline.map(resolveEvent);
}

/**
 * The selector an engine event's `pool` calls for: the main pool's without one, else that
 * fallback pool's (indexes within it, its IP:port ids, its group names). An unknown name, or a
 * `pool` in a scenario without `gate.fallback_pools`, is reported at the event's `pool`, and its
 * endpoints then resolve to none.
 */
function poolSelectors(
  ctx: TimelineContext,
  report: Reporter,
): (pool: string | undefined, path: Path) => EndpointSelector {
  const byName = new Map(
    (ctx.fallbackPools ?? []).map((p) => [p.name, endpointSelector(p, report, p.name)] as const),
  );
  const none: EndpointSelector = () => [];
  return (pool, path) => {
    if (pool === undefined) return ctx.select;
    const sel = byName.get(pool);
    if (sel !== undefined) return sel;
    if (ctx.fallbackPools === undefined)
      report(
        [...path, 'pool'],
        pool,
        `${JSON.stringify(pool)} names a fallback pool, but the scenario declares none (gate.fallback_pools)`,
        'gate.fallback_pools declaring this pool, or no pool (the main pool)',
      );
    else
      report(
        [...path, 'pool'],
        pool,
        `${JSON.stringify(pool)} is not a pool of gate.fallback_pools`,
        byName.size === 0
          ? 'a declared pool (none is)'
          : `one of the declared pools: ${[...byName.keys()].join(', ')}`,
      );
    return none;
  };
}

/**
 * The full rule a `replace` POSTs: the stored rule's non-gate serviceArguments overlaid with the
 * event's, and the event's endpoints (each one of the pool) or the stored ones. Checked with the
 * gate's parser; its problems are reported under the event's path.
 */
function replaceRule(
  ev: Extract<TimelineEventSpec, { event: 'replace' }>,
  stored: RuleInput,
  endpoints: readonly PoolEndpoint[],
  path: Path,
  report: Reporter,
): RuleInput {
  const nonGate = Object.fromEntries(
    Object.entries(stored.serviceArguments).filter(([k]) => !k.startsWith('fc_')),
  );
  const eps: RuleEndpointInput[] =
    ev.endpoints === undefined
      ? stored.endpoints
      : ev.endpoints.map((e, j) => {
          const id = endpointId({ endpointIP: e.endpointIP as string, targetPort: e.targetPort as number });
          const pooled = endpoints.find((p) => p.id === id);
          if (pooled === undefined) {
            report(
              [...path, 'endpoints', j],
              id,
              `${id} is not an endpoint of the pool`,
              `one of ${endpoints.map((p) => p.id).join(', ')}`,
            );
          }
          return {
            endpointIP: e.endpointIP as string,
            targetPort: e.targetPort as number,
            weight: (e.weight as number | undefined) ?? 1,
            role: pooled?.role ?? 'normal',
          };
        });
  const post: RuleInput = { serviceArguments: { ...nonGate, ...ev.serviceArguments }, endpoints: eps };
  try {
    parseRule(post);
  } catch (err) {
    if (!isGateError(err)) throw err;
    report([...path, ...fieldPath(err.field)], err.value, detailAfterField(err), err.expected);
  }
  return post;
}
