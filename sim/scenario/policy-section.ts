/**
 * A scenario's `gate.policy: FILE`: the policy file read beside the scenario and validated by the
 * policy's own parser (gate/policy/parse.ts), its problems reported at their place in the policy
 * file; and the clients' envelope inputs checked against it (a class the policy does not declare,
 * envelope inputs without a policy), and what the scenario asks of it (policy-checks.ts: a
 * `dependency_outage` of a dependency no class has, a `pool` degrade the run cannot model).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { isPolicyError, type Policy, parsePolicy } from '../../gate/index.js';
import { checkPolicyUse } from './policy-checks.js';
import type { EnvelopeSpec, ScenarioFile } from './schema.js';
import { envelopeHasToolTime } from './tool-time.js';

type Path = (string | number)[];

/** Envelope keys a scenario without a policy may give: they label and judge outcomes. */
const LABEL_KEYS: ReadonlySet<string> = new Set(['class', 'deadline_ms']);

/** Where an issue of another file (the policy) is, for the scenario's error. */
export interface PlacedIn {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  /** The field path inside that file. */
  readonly path: string;
  /** The whole line, `file:line:col: path: detail`, as the policy's own error words it. */
  readonly message: string;
}

/** Reports a problem at a path of the scenario, or (with `placed`) at a place in another file. */
export type PolicyReporter = (
  path: Path,
  value: unknown,
  detail: string,
  expected: string,
  placed?: PlacedIn,
) => void;

/** The scenario's policy: the file as named in messages, and its validated text (the run compiles it again). */
export interface ScenarioPolicy {
  /** The policy file's path as messages name it: beside the scenario file, as the scenario is named. */
  file: string;
  /** The file's text, validated by `parsePolicy`. */
  text: string;
  /** Its class names, in file order. */
  classes: string[];
}

/** Largest policy file read, in characters (the policy parser's own bound is 1 Mi characters). */
const MAX_POLICY_FILE_BYTES = 4 * 1024 * 1024;

/** The policy file's name in messages: beside the scenario file, as the scenario is named. */
export function policyFileName(scenarioFile: string, ref: string): string {
  return isAbsolute(ref) ? ref : join(dirname(scenarioFile), ref);
}

/**
 * Reads and validates `gate.policy` of a schema-valid scenario; undefined when there is none or it
 * was refused (each problem reported). Also checks every client's envelope inputs against it.
 */
export function resolvePolicy(
  scenarioFile: string,
  s: ScenarioFile,
  report: PolicyReporter,
  cwd: string,
): ScenarioPolicy | undefined {
  const ref = s.gate.policy;
  const envelopes: { path: Path; env: EnvelopeSpec }[] = [];
  if (s.clients.envelope !== undefined)
    envelopes.push({ path: ['clients', 'envelope'], env: s.clients.envelope });
  (s.clients.tenants ?? []).forEach((t, i) => {
    if (t.envelope !== undefined)
      envelopes.push({ path: ['clients', 'tenants', i, 'envelope'], env: t.envelope });
  });
  if (ref === undefined) {
    // Without a policy, the class and the deadline only label and judge the outcomes (per-class
    // useful on-time completions, to compare with a run of the same clients under a policy);
    // anything else would be a setting that changes nothing.
    // Tool calls of a client with a tool time drive its tool phase (sim/run/tool-phase.ts).
    for (const e of envelopes)
      for (const [k, v] of Object.entries(e.env))
        if (!LABEL_KEYS.has(k) && !(k === 'tool_calls' && envelopeHasToolTime(s.clients, e.path)))
          report(
            [...e.path, k],
            v,
            'is given without gate.policy (only a policy reads it)',
            k === 'tool_calls'
              ? 'gate.policy, or a tool_ms for the client (then the calls take tool time)'
              : 'gate.policy, or only class and deadline_ms',
          );
    return undefined;
  }
  const name = policyFileName(scenarioFile, ref);
  const path = isAbsolute(ref) ? ref : resolvePath(dirname(resolvePath(cwd, scenarioFile)), ref);
  if (!existsSync(path)) {
    report(
      ['gate', 'policy'],
      ref,
      `${JSON.stringify(ref)} was not found (looked for ${path})`,
      'an existing policy file',
    );
    return undefined;
  }
  let text: string;
  try {
    if (statSync(path).size > MAX_POLICY_FILE_BYTES) {
      report(
        ['gate', 'policy'],
        ref,
        `${name} is above ${MAX_POLICY_FILE_BYTES} bytes`,
        'a policy file of at most 4 MiB',
      );
      return undefined;
    }
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    report(['gate', 'policy'], ref, `cannot read ${name} (${why})`, 'a readable policy file');
    return undefined;
  }
  let policy: Policy;
  try {
    policy = parsePolicy(text, name);
  } catch (err) {
    if (!isPolicyError(err)) throw err;
    for (const iss of err.issues)
      report(['gate', 'policy'], iss.value, iss.message, 'a valid policy file (docs/policy.md)', {
        file: iss.file,
        line: iss.line,
        col: iss.col,
        path: iss.path,
        message: iss.message,
      });
    if (err.omitted > 0)
      report(['gate', 'policy'], ref, `and ${err.omitted} more problems in ${name}`, 'a valid policy file');
    return undefined;
  }
  const classes = policy.classes.map((c) => c.name);
  checkPolicyUse(s, policy, name, text, report);
  for (const e of envelopes) {
    const c = e.env.class;
    if (c !== undefined && !classes.includes(c))
      report([...e.path, 'class'], c, `"${c}" is not a class of ${name}`, `one of ${classes.join(', ')}`);
  }
  return { file: name, text, classes };
}
