/**
 * The engines and endpoints part of a scenario's normal form: engine groups in pool order (from
 * `engines` or from engine groups in `gate.rule.endpoints`), named and calibrated, one endpoint
 * per engine paired with the rule's explicit endpoints, and endpoint selectors resolved to pool
 * indexes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { endpointId } from '../../gate/index.js';
import { applyCalibratedProfile } from '../engine/calibrate.js';
import { parseProfileFileText, profileFileBase } from '../engine/profile-file.js';
import { DEPLOYMENT_PROFILES, type DeploymentProfile, type DeploymentProfileId } from '../engine/profiles.js';
import { dataFileCandidates } from './data-files.js';
import type { EngineGroup, Path, PoolEndpoint, Reporter, ResolveOptions } from './resolve.js';
import { type EngineGroupSpec, engineGroupSchema, isEngineGroupItem, type ScenarioFile } from './schema.js';

/** Generated address of the n-th endpoint of the pool (from 0). */
export function generatedEndpoint(n: number): { endpointIP: string; targetPort: number } {
  return { endpointIP: `10.0.${Math.floor(n / 250)}.${(n % 250) + 1}`, targetPort: 8000 };
}

/** The pool of a scenario: its engine groups and one endpoint per engine, both in pool order. */
export interface ResolvedPool {
  engines: EngineGroup[];
  endpoints: PoolEndpoint[];
}

/** Resolves the engine groups and the pool's endpoints of a schema-valid scenario. */
export function resolvePool(
  file: string,
  s: ScenarioFile,
  report: Reporter,
  options: ResolveOptions,
): ResolvedPool {
  const ruleEps = s.gate.rule?.endpoints;
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
  const engines = nameGroups(groupSpecs, file, report, options);
  const endpoints = pairEndpoints(engines, explicit, report);
  const totalEngines = engines.reduce((n, g) => n + g.count, 0);
  if (explicit !== undefined && explicit.length !== totalEngines && groupSpecs.length > 0) {
    report(
      ['gate', 'rule', 'endpoints'],
      explicit.length,
      `lists ${explicit.length} endpoints for ${totalEngines} engines`,
      `one endpoint per engine (${totalEngines}), paired in order`,
    );
  }
  return { engines, endpoints };
}

/** The groups named (a missing name from the profile, numbered on reuse) and calibrated. */
export function nameGroups(
  groupSpecs: readonly { spec: EngineGroupSpec; path: Path }[],
  file: string,
  report: Reporter,
  options: ResolveOptions,
): EngineGroup[] {
  const engines: EngineGroup[] = [];
  const names = new Set<string>();
  const profileUses = new Map<string, number>();
  for (const { spec: given, path } of groupSpecs) {
    const file_ =
      given.profile_file === undefined ? undefined : readProfileFile(given, path, file, report, options);
    const profile = given.profile ?? file_?.base;
    if (profile === undefined) {
      if (given.profile_file === undefined) {
        report(
          [...path, 'profile'],
          undefined,
          'is missing; expected a profile name, or a profile_file (whose base is the profile)',
          'a profile name, or a profile_file',
        );
      }
      continue;
    }
    const spec = { ...given, profile };
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
      file_ === undefined ? undefined : calibratedProfile(spec, file_, [...path, 'profile_file'], report);
    engines.push({ ...spec, name, ...(calibrated === undefined ? {} : { calibrated }) });
  }
  return engines;
}

/** One endpoint per engine: the rule's explicit endpoint paired in order, or a generated address. */
function pairEndpoints(
  engines: readonly EngineGroup[],
  explicit: readonly Record<string, unknown>[] | undefined,
  report: Reporter,
): PoolEndpoint[] {
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
  return endpoints;
}

/** A group's `profile_file`, read and parsed, with the base it names. */
interface ProfileFile {
  readonly ref: string;
  readonly json: unknown;
  readonly base: string;
}

/** Reads the group's `profile_file` (undefined after a reported problem, or when files are not checked). */
function readProfileFile(
  spec: EngineGroupSpec,
  groupPath: Path,
  file: string,
  report: Reporter,
  options: ResolveOptions,
): ProfileFile | undefined {
  const path = [...groupPath, 'profile_file'];
  const ref = spec.profile_file as string;
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
    const json = parseProfileFileText(readFileSync(found, 'utf8'), ref);
    return { ref, json, base: profileFileBase(json, ref) };
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

/** The group's deployment profile with its `profile_file` applied (undefined after a reported problem). */
function calibratedProfile(
  spec: EngineGroup | (EngineGroupSpec & { profile: string }),
  f: ProfileFile,
  path: Path,
  report: Reporter,
): DeploymentProfile | undefined {
  if (!(spec.profile in DEPLOYMENT_PROFILES)) {
    report(
      path,
      f.ref,
      `is only for a deployment profile (this group is ${spec.profile})`,
      'a file whose base is a deployment profile, or no profile_file',
    );
    return undefined;
  }
  const id = spec.profile as DeploymentProfileId;
  try {
    return applyCalibratedProfile(f.json, id, DEPLOYMENT_PROFILES[id], f.ref);
  } catch (err) {
    report(
      path,
      f.ref,
      err instanceof Error ? err.message : String(err),
      'a file written by sluice calibrate --out',
    );
    return undefined;
  }
}

/**
 * Resolves an endpoint selector (indexes, `IP:port` ids, engine group names; absent: the whole
 * pool) to sorted pool indexes, reporting each item that names nothing at `path`.
 */
export type EndpointSelector = (sel: readonly (number | string)[] | undefined, path: Path) => number[];

/**
 * The endpoint selector over a resolved pool (the main pool, or a fallback pool named `name`):
 * an index is a position in that pool, from 0; the result is the endpoints' `index` (for the
 * main pool the same number, for a fallback pool the run-wide index its engine has).
 */
export function endpointSelector(pool: ResolvedPool, report: Reporter, name?: string): EndpointSelector {
  const { engines, endpoints } = pool;
  const which = name === undefined ? 'the pool' : `fallback pool ${name}`;
  return (sel, path) => {
    if (sel === undefined) return endpoints.map((e) => e.index);
    const out = new Set<number>();
    sel.forEach((item, j) => {
      if (typeof item === 'number') {
        if (item >= endpoints.length) {
          report(
            [...path, j],
            item,
            `${item} is not an endpoint index (${which} has ${endpoints.length})`,
            `an index from 0 to ${endpoints.length - 1}`,
          );
        } else out.add(endpoints[item]!.index);
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
          `"${item}" is neither an endpoint IP:port nor an engine group${name === undefined ? '' : ` of ${which}`}`,
          `an endpoint index, IP:port or one of the groups ${engines.map((g) => g.name).join(', ')}`,
        );
      }
      for (const e of byGroup) out.add(e.index);
    });
    return [...out].sort((a, b) => a - b);
  };
}
