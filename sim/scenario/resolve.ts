/**
 * A scenario's normal form, and the checks across sections that build it from a schema-valid file:
 * the engines in pool order with one endpoint each (resolve-engines.ts), the gate's rule with
 * explicit endpoints (resolve-gate.ts), the timeline with endpoint selectors as pool indexes and
 * each replace as the full rule to POST (resolve-timeline.ts), and the clients with the trace
 * file found on disk (resolve-clients.ts).
 */
import type { TraceFormat } from '../clients/trace-files.js';
import type { DeploymentProfile } from '../engine/profiles.js';
import { type PolicyReporter, resolvePolicy, type ScenarioPolicy } from './policy-section.js';
import { checkClientModels, resolveClients } from './resolve-clients.js';
import { endpointSelector, resolvePool } from './resolve-engines.js';
import { type FallbackPool, resolveFallbackPools } from './resolve-fallback-pools.js';
import { resolveGate } from './resolve-gate.js';
import { resolveTelemetry, resolveTimeline, type TimelineContext } from './resolve-timeline.js';
import type { EngineGroupSpec, ScenarioFile, SmgSettings, TimelineEventSpec, TraceSpec } from './schema.js';

/** A path into the scenario file: keys and list indexes. */
export type Path = (string | number)[];

/**
 * Reports a problem at a path of the file, or, with `placed`, at a place in a file the scenario
 * references (its policy), worded as that file's own error.
 */
export type Reporter = PolicyReporter;

/** An engine group with its name resolved. */
export type EngineGroup = Omit<EngineGroupSpec, 'profile'> & {
  /** The profile: as written, or the base of the group's `profile_file`. */
  profile: NonNullable<EngineGroupSpec['profile']>;
  name: string;
  /** The deployment profile with a `profile_file`'s calibrated terms applied. */
  calibrated?: DeploymentProfile;
};

/** An endpoint of the pool, backed by one engine. */
export interface PoolEndpoint {
  /** Position in the pool (and in the rule's endpoint list), from 0. */
  index: number;
  /** `IP:port`. */
  id: string;
  endpointIP: string;
  targetPort: number;
  weight: number;
  role: 'normal' | 'prefill' | 'decode';
  /** Name of the engine group of its engine. */
  group: string;
  /** Index of its engine within the group, from 0. */
  engine: number;
}

/** A rule endpoint as POSTed. */
export interface RuleEndpointInput {
  endpointIP: string;
  targetPort: number;
  weight: number;
  role: 'normal' | 'prefill' | 'decode';
}

/** A loxilb rule as POSTed: serviceArguments as given, explicit endpoints. */
export interface RuleInput {
  serviceArguments: Record<string, unknown>;
  endpoints: RuleEndpointInput[];
  secondaryIPs?: unknown[];
}

/** The loxilb capacity gate: the rule and the gateway's LLB_FC_* environment. */
export interface LoxilbGate {
  dialect: 'loxilb';
  rule: RuleInput;
  /** Environment values as strings. */
  env: Record<string, string>;
}

/** SMG's admission control. */
export interface SmgGate {
  dialect: 'smg';
  smg: SmgSettings;
}

type Timed<E extends TimelineEventSpec['event']> = Extract<TimelineEventSpec, { event: E }>;

/**
 * A timeline event with endpoint selectors resolved to pool indexes. With `pool` (a fallback
 * pool of `fallbackPools`), `endpoints` are that pool's endpoints' `index` (run-wide: they count
 * on from the main pool's last).
 */
export type TimelineEvent =
  | (Timed<'replace'> & {
      /** The full rule to POST: the stored rule's non-gate fields, these serviceArguments, the endpoints. */
      rule: RuleInput;
    })
  | Timed<'maintenance'>
  | (Omit<Timed<'endpoint_down'>, 'endpoints'> & { endpoints: number[] })
  | (Omit<Timed<'endpoint_up'>, 'endpoints'> & { endpoints: number[] })
  | (Omit<Timed<'flap'>, 'endpoints' | 'down_s'> & { endpoints: number[]; down_s: number })
  | (Omit<Timed<'scrape_outage'>, 'endpoints'> & { endpoints: number[] })
  | (Omit<Timed<'engine_slowdown'>, 'endpoints'> & { endpoints: number[] })
  | Timed<'tool_slowdown'>
  | (Timed<'capacity_loss'> & { endpoints: number[] })
  | Timed<'defer_store_outage'>
  | Timed<'dependency_outage'>
  | Timed<'workload_shift'>;

/** The telemetry section with outage selectors resolved. */
export type Telemetry = Omit<ScenarioFile['telemetry'], 'outages'> & {
  outages: { at_s: number; duration_s: number; endpoints: number[] }[];
};

/** The trace replay with its file found and format known. */
export type ResolvedTrace = Omit<TraceSpec, 'format'> & { format: TraceFormat };

/** A validated scenario in normal form. Deep-frozen by the loader. */
export interface Scenario {
  /** The file as named by the caller. */
  file: string;
  name: string;
  description: string;
  seed: number;
  duration_s: number;
  warmup_s: number;
  gate: LoxilbGate | SmgGate;
  /** `gate.policy`: admission goes through the policy, in front of the rule or SMG settings. */
  policy?: ScenarioPolicy;
  /** `gate.fallback_pools`, in file order: the pools the policy's pool degrades send requests to. */
  fallbackPools?: FallbackPool[];
  /** Engine groups in pool order. */
  engines: EngineGroup[];
  /** One endpoint per engine, in pool order. */
  endpoints: PoolEndpoint[];
  telemetry: Telemetry;
  health: ScenarioFile['health'];
  clients: Omit<ScenarioFile['clients'], 'trace'> & { trace?: ResolvedTrace };
  timeline: TimelineEvent[];
}

/** Options of the loader that reach outside the text. */
export interface ResolveOptions {
  /** Environment for `${VAR}` in file paths. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory for the second place a relative file is looked up. Default `process.cwd()`. */
  cwd?: string;
  /** Check that referenced files exist (the trace). Default true. */
  checkFiles?: boolean;
}

/** Cross-checks a schema-valid scenario and builds its normal form; problems go to `report`. */
export function resolveScenario(
  file: string,
  s: ScenarioFile,
  report: Reporter,
  options: ResolveOptions = {},
): Scenario {
  const duration = s.duration_s;
  if (s.warmup_s >= duration) {
    report(
      ['warmup_s'],
      s.warmup_s,
      `${s.warmup_s} is not below duration_s (${duration})`,
      `a number below duration_s (${duration})`,
    );
  }
  const pool = resolvePool(file, s, report, options);
  const { engines, endpoints } = pool;
  const gate = resolveGate(s, endpoints);
  const fallback = resolveFallbackPools(file, s, endpoints.length, report, options);
  const ctx: TimelineContext = {
    duration_s: duration,
    gate,
    endpoints,
    select: endpointSelector(pool, report),
    ...(s.gate.fallback_pools === undefined ? {} : { fallbackPools: fallback }),
  };
  const telemetry = resolveTelemetry(s, ctx, report);
  const timeline = resolveTimeline(s, ctx, report);
  const clients = resolveClients(file, s, engines, report, options);
  const scenario: Scenario = {
    file,
    name: s.name,
    description: s.description,
    seed: s.seed,
    duration_s: s.duration_s,
    warmup_s: s.warmup_s,
    gate,
    engines,
    endpoints,
    telemetry,
    health: s.health,
    clients,
    timeline,
  };
  const policy = resolvePolicy(file, s, report, options.cwd ?? process.cwd());
  if (policy !== undefined) scenario.policy = policy;
  if (fallback.length > 0) scenario.fallbackPools = fallback;
  checkClientModels(scenario, report);
  return scenario;
}
