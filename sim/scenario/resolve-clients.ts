/**
 * The clients part of a scenario's normal form: the cross-section checks of the client section
 * (something is sent, P/D requests have prefill and decode engines), the trace file found on
 * disk with its format known, and the client models' own validation run over the result.
 */
import { existsSync } from 'node:fs';
import { createArrivalProcess } from '../clients/arrivals.js';
import { ClosedLoopUsers } from '../clients/closed-loop.js';
import { ClientConfigError } from '../clients/errors.js';
import { createRetryPolicy } from '../clients/retry.js';
import { resolveTenants } from '../clients/tenants.js';
import { traceFormatOf } from '../clients/trace-files.js';
import { toClientConfig } from './client-config.js';
import { dataFileCandidates, expandVars } from './data-files.js';
import { fieldPath } from './gate-section.js';
import { detailAfterField } from './issues.js';
import type { EngineGroup, Path, Reporter, ResolvedTrace, ResolveOptions, Scenario } from './resolve.js';
import type { ScenarioFile, TraceSpec } from './schema.js';
import { checkToolTime } from './tool-time.js';

/** The client section checked against the pool, with its trace resolved. */
export function resolveClients(
  file: string,
  s: ScenarioFile,
  engines: readonly EngineGroup[],
  report: Reporter,
  options: ResolveOptions,
): Scenario['clients'] {
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
  checkToolTime(c, report);
  let trace: ResolvedTrace | undefined;
  if (c.trace !== undefined) trace = resolveTrace(file, c.trace, report, options);
  const { trace: _unused, ...clientRest } = c;
  return trace === undefined ? clientRest : { ...clientRest, trace };
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

function camelToSnakePath(field: string): Path {
  return fieldPath(field).map((seg) =>
    typeof seg === 'string' ? seg.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : seg,
  );
}

/** Runs the client section of a resolved scenario through the client models' own validation. */
export function checkClientModels(s: Scenario, report: Reporter): void {
  const setup = toClientConfig(s);
  const streams = () => () => 0.5;
  const attempt = (fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      if (!(err instanceof ClientConfigError)) throw err;
      report(camelToSnakePath(err.field), err.value, detailAfterField(err), err.expected);
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
