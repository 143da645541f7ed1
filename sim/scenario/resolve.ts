/**
 * Checks across sections of a schema-valid scenario, and its normal form: the engines in pool order
 * with one endpoint each, the gate's rule with explicit endpoints, endpoint selectors as pool
 * indexes, each replace as the full rule to POST, and the trace file found on disk.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endpointId, isGateError, parseRule } from '../../gate/index.js';
import { createArrivalProcess } from '../clients/arrivals.js';
import { ClosedLoopUsers } from '../clients/closed-loop.js';
import { ClientConfigError } from '../clients/errors.js';
import { createRetryPolicy } from '../clients/retry.js';
import { resolveTenants } from '../clients/tenants.js';
import { type TraceFormat, traceFormatOf } from '../clients/trace-files.js';
import { applyCalibratedProfile } from '../engine/calibrate.js';
import { DEPLOYMENT_PROFILES, type DeploymentProfile, type DeploymentProfileId } from '../engine/profiles.js';
import { toClientConfig } from './client-config.js';
import { fieldPath } from './gate-section.js';
import { type PolicyReporter, resolvePolicy, type ScenarioPolicy } from './policy-section.js';
import {
  type EngineGroupSpec,
  engineGroupSchema,
  isEngineGroupItem,
  type ScenarioFile,
  type SmgSettings,
  type TimelineEventSpec,
  type TraceSpec,
} from './schema.js';

type Path = (string | number)[];

/**
 * Reports a problem at a path of the file, or, with `placed`, at a place in a file the scenario
 * references (its policy), worded as that file's own error.
 */
export type Reporter = PolicyReporter;

/** An engine group with its name resolved. */
export type EngineGroup = EngineGroupSpec & {
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

/** A timeline event with endpoint selectors resolved to pool indexes. */
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
  | (Timed<'capacity_loss'> & { endpoints: number[] })
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

/**
 * The nearest directory at or above `dir` that holds Sluice's package.json. This module runs both
 * from its source (sim/scenario/) and bundled into dist/, so the root is found, not assumed.
 */
export function findRepoRoot(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    const pkg = resolvePath(d, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'sluice') {
      return d;
    }
    if (dirname(d) === d) throw new Error(`no package.json of sluice at or above ${dir}`);
  }
}

/** Root of the repository. */
export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * The places a relative data file is looked up, in order: beside the scenario file, in the working
 * directory, then `data/<basename>` of the repository (the public traces Sluice ships). Nothing
 * outside the repository is ever looked at.
 */
export function dataFileCandidates(file: string, scenarioFile: string, cwd: string): string[] {
  if (isAbsolute(file)) return [file];
  const base = file.split(/[\\/]/).pop() ?? file;
  return [
    resolvePath(dirname(resolvePath(cwd, scenarioFile)), file),
    resolvePath(cwd, file),
    resolvePath(REPO_ROOT, 'data', base),
  ];
}

/** `${NAME}` replaced from `env`; the names that are unset are returned instead. */
export function expandVars(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): { value: string; missing: string[] } {
  const missing: string[] = [];
  const value = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    const v = env[name];
    if (v === undefined || v === '') {
      missing.push(name);
      return '';
    }
    return v;
  });
  return { value, missing };
}

/** Generated address of the n-th endpoint of the pool (from 0). */
export function generatedEndpoint(n: number): { endpointIP: string; targetPort: number } {
  return { endpointIP: `10.0.${Math.floor(n / 250)}.${(n % 250) + 1}`, targetPort: 8000 };
}

function camelToSnakePath(field: string): Path {
  return fieldPath(field).map((seg) =>
    typeof seg === 'string' ? seg.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : seg,
  );
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

  // ---- engines and endpoints
  const rule = s.gate.rule;
  const ruleEps = rule?.endpoints;
  let groupSpecs: { spec: EngineGroupSpec; path: Path }[] = [];
  let explicit: Record<string, unknown>[] | undefined;
  const ruleGroups =
    ruleEps === undefined
      ? undefined
      : Array.isArray(ruleEps)
        ? ruleEps.length > 0 && ruleEps.every(isEngineGroupItem)
          ? ruleEps
          : undefined
        : [ruleEps];
  if (Array.isArray(ruleEps) && ruleGroups === undefined) explicit = ruleEps;
  if (ruleGroups !== undefined) {
    if (s.engines !== undefined) {
      report(
        ['engines'],
        s.engines.length,
        'is given with engine groups in gate.rule.endpoints',
        'the engines in one place: engines, or groups in gate.rule.endpoints',
      );
    }
    groupSpecs = ruleGroups.map((g, i) => ({
      spec: engineGroupSchema.parse(g),
      path: Array.isArray(ruleEps) ? ['gate', 'rule', 'endpoints', i] : ['gate', 'rule', 'endpoints'],
    }));
  } else if (s.engines !== undefined) {
    groupSpecs = s.engines.map((spec, i) => ({ spec, path: ['engines', i] }));
  } else {
    report(
      ['engines'],
      undefined,
      'missing; expected a list of engine groups (or engine groups in gate.rule.endpoints)',
      'a list of engine groups',
    );
  }

  const engines: EngineGroup[] = [];
  const names = new Set<string>();
  const profileUses = new Map<string, number>();
  for (const { spec, path } of groupSpecs) {
    let name = spec.name;
    if (name === undefined) {
      const n = (profileUses.get(spec.profile) ?? 0) + 1;
      profileUses.set(spec.profile, n);
      name = n === 1 ? spec.profile : `${spec.profile}-${n}`;
      while (names.has(name)) name = `${name}-x`;
    } else if (names.has(name)) {
      report(
        [...path, 'name'],
        name,
        `"${name}" names another group too`,
        'a name unique among the engine groups',
      );
    }
    names.add(name);
    const calibrated =
      spec.profile_file === undefined
        ? undefined
        : calibratedProfile(spec, [...path, 'profile_file'], file, report, options);
    engines.push({ ...spec, name, ...(calibrated === undefined ? {} : { calibrated }) });
  }
  const totalEngines = engines.reduce((n, g) => n + g.count, 0);

  const endpoints: PoolEndpoint[] = [];
  let n = 0;
  for (const g of engines) {
    for (let e = 0; e < g.count; e++, n++) {
      const given = explicit?.[n];
      const addr =
        given === undefined
          ? generatedEndpoint(n)
          : { endpointIP: given.endpointIP as string, targetPort: given.targetPort as number };
      const role = g.role;
      if (given !== undefined && given.role !== undefined && given.role !== role) {
        report(
          ['gate', 'rule', 'endpoints', n, 'role'],
          given.role,
          `"${String(given.role)}" is not the role of its engine (${g.name} #${e}: ${role})`,
          `"${role}", the role of engine group ${g.name}`,
        );
      }
      endpoints.push({
        index: n,
        id: endpointId(addr),
        ...addr,
        weight: given === undefined ? g.weight : ((given.weight as number | undefined) ?? 1),
        role,
        group: g.name,
        engine: e,
      });
    }
  }
  if (explicit !== undefined && explicit.length !== totalEngines && groupSpecs.length > 0) {
    report(
      ['gate', 'rule', 'endpoints'],
      explicit.length,
      `lists ${explicit.length} endpoints for ${totalEngines} engines`,
      `one endpoint per engine (${totalEngines}), paired in order`,
    );
  }

  // ---- gate
  let gate: LoxilbGate | SmgGate;
  const ruleEndpoints = (): RuleEndpointInput[] =>
    endpoints.map((ep) => ({
      endpointIP: ep.endpointIP,
      targetPort: ep.targetPort,
      weight: ep.weight,
      role: ep.role,
    }));
  if (rule !== undefined) {
    const input: RuleInput = { serviceArguments: { ...rule.serviceArguments }, endpoints: ruleEndpoints() };
    if (rule.secondaryIPs !== undefined) input.secondaryIPs = [...rule.secondaryIPs];
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(s.gate.env ?? {})) env[k] = String(v);
    gate = { dialect: 'loxilb', rule: input, env };
  } else {
    gate = { dialect: 'smg', smg: s.gate.smg as SmgSettings };
  }

  // ---- endpoint selectors
  const select = (sel: readonly (number | string)[] | undefined, path: Path): number[] => {
    if (sel === undefined) return endpoints.map((e) => e.index);
    const out = new Set<number>();
    sel.forEach((item, j) => {
      if (typeof item === 'number') {
        if (item >= endpoints.length) {
          report(
            [...path, j],
            item,
            `${item} is not an endpoint index (the pool has ${endpoints.length})`,
            `an index from 0 to ${endpoints.length - 1}`,
          );
        } else out.add(item);
        return;
      }
      const byId = endpoints.find((e) => e.id === item);
      if (byId !== undefined) {
        out.add(byId.index);
        return;
      }
      const byGroup = endpoints.filter((e) => e.group === item);
      if (byGroup.length === 0) {
        report(
          [...path, j],
          item,
          `"${item}" is neither an endpoint IP:port nor an engine group`,
          `an endpoint index, IP:port or one of the groups ${engines.map((g) => g.name).join(', ')}`,
        );
      }
      for (const e of byGroup) out.add(e.index);
    });
    return [...out].sort((a, b) => a - b);
  };

  // ---- telemetry
  const telemetry: Telemetry = {
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
        endpoints: select(o.endpoints, ['telemetry', 'outages', i, 'endpoints']),
      };
    }),
  };

  // ---- timeline
  const tenantIds = new Set((s.clients.tenants ?? []).map((t) => t.id).filter((id) => id !== undefined));
  let stored: RuleInput | undefined = gate.dialect === 'loxilb' ? gate.rule : undefined;
  let prevAt = 0;
  const timeline: TimelineEvent[] = s.timeline.map((ev, i): TimelineEvent => resolveEvent(ev, i));
  function resolveEvent(ev: TimelineEventSpec, i: number): TimelineEvent {
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
        const nonGate = Object.fromEntries(
          Object.entries(stored.serviceArguments).filter(([k]) => !k.startsWith('fc_')),
        );
        const eps: RuleEndpointInput[] =
          ev.endpoints === undefined
            ? stored.endpoints
            : ev.endpoints.map((e, j) => {
                const id = endpointId({
                  endpointIP: e.endpointIP as string,
                  targetPort: e.targetPort as number,
                });
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
          const detail = err.message.startsWith(`${err.field}: `)
            ? err.message.slice(err.field.length + 2)
            : err.message;
          report([...path, ...fieldPath(err.field)], err.value, detail, err.expected);
        }
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
        return { ...ev, endpoints: select(ev.endpoints, [...path, 'endpoints']) };
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
        return { ...ev, down_s: down, endpoints: select(ev.endpoints, [...path, 'endpoints']) };
      }
      case 'scrape_outage':
      case 'engine_slowdown':
        return { ...ev, endpoints: select(ev.endpoints, [...path, 'endpoints']) };
      case 'capacity_loss': {
        const k = Math.min(endpoints.length, Math.max(1, Math.round(ev.share * endpoints.length)));
        return { ...ev, endpoints: endpoints.slice(endpoints.length - k).map((e) => e.index) };
      }
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
  }

  // ---- clients
  const c = s.clients;
  const tenants = c.tenants ?? [];
  const ownArrivals = tenants.length > 0 && tenants.every((t) => t.arrival !== undefined);
  if (c.arrival === undefined && !ownArrivals && c.closed_loop === undefined && c.trace === undefined) {
    report(
      ['clients'],
      undefined,
      'sends nothing',
      'arrival, tenants with their own arrival, closed_loop or trace',
    );
  }
  if (ownArrivals && c.arrival !== undefined) {
    report(
      ['clients', 'arrival'],
      c.arrival.kind,
      'is unused: every tenant has its own arrival',
      'no clients.arrival when every tenant has its own',
    );
  }
  const pdWanted = (c.pd_share ?? 0) > 0 || tenants.some((t) => (t.pd_share ?? 0) > 0);
  if (pdWanted && !(engines.some((g) => g.role === 'prefill') && engines.some((g) => g.role === 'decode'))) {
    report(
      ['clients', 'pd_share'],
      c.pd_share,
      'sends P/D requests to a pool without prefill and decode engines',
      'prefill and decode engine groups when pd_share > 0',
    );
  }
  let trace: ResolvedTrace | undefined;
  if (c.trace !== undefined) trace = resolveTrace(file, c.trace, report, options);
  const { trace: _unused, ...clientRest } = c;
  const clients: Scenario['clients'] = trace === undefined ? clientRest : { ...clientRest, trace };

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
  checkClientModels(scenario, report);
  return scenario;
}

/** The group's deployment profile with its `profile_file` applied (undefined after a reported problem). */
function calibratedProfile(
  spec: EngineGroupSpec,
  path: Path,
  file: string,
  report: Reporter,
  options: ResolveOptions,
): DeploymentProfile | undefined {
  const ref = spec.profile_file as string;
  if (!(spec.profile in DEPLOYMENT_PROFILES)) {
    report(path, ref, `is only for a deployment profile (this group is ${spec.profile})`, 'no profile_file');
    return undefined;
  }
  const id = spec.profile as DeploymentProfileId;
  const candidates = dataFileCandidates(ref, file, options.cwd ?? process.cwd());
  const found = candidates.find((p) => existsSync(p));
  if (found === undefined) {
    if (options.checkFiles === false) return undefined;
    report(
      path,
      ref,
      `${JSON.stringify(ref)} was not found (looked for ${candidates.join(', ')})`,
      'an existing file written by sluice calibrate --out',
    );
    return undefined;
  }
  try {
    return applyCalibratedProfile(JSON.parse(readFileSync(found, 'utf8')), id, DEPLOYMENT_PROFILES[id], ref);
  } catch (err) {
    report(
      path,
      ref,
      err instanceof Error ? err.message : String(err),
      'a file written by sluice calibrate --out',
    );
    return undefined;
  }
}

function resolveTrace(file: string, t: TraceSpec, report: Reporter, options: ResolveOptions): ResolvedTrace {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const { value, missing } = expandVars(t.file, env);
  let path = value;
  if (missing.length > 0) {
    report(
      ['clients', 'trace', 'file'],
      t.file,
      `uses ${missing.map((m) => `\${${m}}`).join(', ')}, which is not set`,
      'a path whose variables are set in the environment',
    );
  } else if (options.checkFiles !== false) {
    const candidates = dataFileCandidates(value, file, cwd);
    const found = candidates.find((p) => existsSync(p));
    if (found === undefined) {
      report(
        ['clients', 'trace', 'file'],
        t.file,
        `${JSON.stringify(t.file)} was not found (looked for ${candidates.join(', ')})`,
        'an existing trace file',
      );
    } else path = found;
  } else {
    path = dataFileCandidates(value, file, cwd)[0] ?? value;
  }
  const format = t.format ?? traceFormatOf(path);
  if (format === undefined) {
    report(
      ['clients', 'trace', 'format'],
      undefined,
      `missing, and ${JSON.stringify(t.file)} is neither .csv nor .jsonl`,
      'azure or mooncake',
    );
  }
  return { ...t, file: path, format: format ?? 'azure' };
}

/** Runs the client section through the client models' own validation. */
function checkClientModels(s: Scenario, report: Reporter): void {
  const setup = toClientConfig(s);
  const streams = () => () => 0.5;
  const attempt = (fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      if (!(err instanceof ClientConfigError)) throw err;
      const detail = err.message.startsWith(`${err.field}: `)
        ? err.message.slice(err.field.length + 2)
        : err.message;
      report(camelToSnakePath(err.field), err.value, detail, err.expected);
    }
  };
  attempt(() => resolveTenants(setup.workload, 'clients'));
  const arrival = setup.workload.arrival;
  if (arrival !== undefined) attempt(() => createArrivalProcess(arrival, streams(), 'clients.arrival'));
  setup.workload.tenants?.forEach((t, i) => {
    const a = t.arrival;
    if (a !== undefined) attempt(() => createArrivalProcess(a, streams(), `clients.tenants[${i}].arrival`));
  });
  attempt(() => createRetryPolicy(setup.retry, 'clients.retry'));
  const closedLoop = setup.closedLoop;
  if (closedLoop !== undefined)
    attempt(() => new ClosedLoopUsers(closedLoop, streams(), 'clients.closedLoop'));
}
