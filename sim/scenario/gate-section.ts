/**
 * The gate part of a scenario checked by the gate's own code: a loxilb rule in the spec's
 * `serviceArguments` names (each field through `parseFcFields` or the rule's field checks, so every
 * bad field is reported, not just the first), `LLB_FC_*` environment values through `readEnv`, and
 * SMG's admission settings. Also the JSON Schema of these parts, derived from the same tables.
 */
import type { z } from 'zod';
import {
  FC_FIELD_NAMES,
  FIELDS,
  INERT_SERVICE_FIELDS,
  isGateError,
  MODE_VALUES,
  parseFcFields,
  parseRule,
  readEnv,
  SERVICE_ARGUMENT_FIELDS,
  SWITCH_VALUES,
} from '../../gate/index.js';
import { detailAfterField, nearest, report, show } from './issues.js';

/** The `LLB_FC_*` (and `LLB_PD_MAX_INFLIGHT_PER_EP`) variables the gate reads. */
export const GATE_ENV_NAMES: readonly string[] = FC_FIELD_NAMES.flatMap((k) => FIELDS[k].env);

/** Keys an explicit endpoint of a rule may carry (as `parseRule` accepts them). */
export const ENDPOINT_KEYS = ['endpointIP', 'targetPort', 'weight', 'role', 'state', 'counter'] as const;

type Path = readonly (string | number)[];

/** `serviceArguments.fc_x` or `endpoints[2].weight` as path segments. */
export function fieldPath(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of field.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (m === null) {
      out.push(part);
      continue;
    }
    if (m[1] !== undefined && m[1] !== '') out.push(m[1]);
    for (const idx of (m[2] ?? '').matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

/** Reports a GateError (or rethrows anything else) at `prefix` + the error's field. */
function reportGateError(
  ctx: z.RefinementCtx,
  err: unknown,
  prefix: Path,
  remap?: (path: (string | number)[]) => (string | number)[],
): void {
  if (!isGateError(err)) throw err;
  let path = fieldPath(err.field);
  if (remap !== undefined) path = remap(path);
  report(
    ctx,
    [...prefix, ...path],
    err.value,
    detailAfterField(err),
    err.expected,
    err.code === 'SLUICE_E_FIELD_UNKNOWN',
  );
}

const ALL_ARG_NAMES = [...Object.keys(SERVICE_ARGUMENT_FIELDS), ...FC_FIELD_NAMES];

/**
 * Checks every field of a `serviceArguments` mapping, each on its own, reporting at
 * `prefix.<field>` (prefix: the path of the mapping relative to the refined value). Returns the
 * number of problems found.
 * @param requireKey when true, `externalIP` and `port` must be present (a whole rule, not a replace).
 */
export function checkServiceArguments(
  args: Readonly<Record<string, unknown>>,
  ctx: z.RefinementCtx,
  prefix: Path,
  requireKey: boolean,
): number {
  const under = (p: (string | number)[]) => (p[0] === 'serviceArguments' ? [...prefix, ...p.slice(1)] : p);
  let problems = 0;
  for (const [key, value] of Object.entries(args)) {
    const where = `serviceArguments.${key}`;
    try {
      if (key.startsWith('fc_')) {
        if (key === 'fc_effective') {
          report(ctx, [...prefix, key], value, 'is read-only', 'no fc_effective in input');
          problems += 1;
          continue;
        }
        parseFcFields({ [key]: value }, 'serviceArguments');
        continue;
      }
      const check = SERVICE_ARGUMENT_FIELDS[key];
      if (check === undefined) {
        const hint = nearest(key, ALL_ARG_NAMES);
        report(
          ctx,
          [...prefix, key],
          value,
          `unknown field${hint ? ` (did you mean ${hint}?)` : ''}`,
          'a serviceArguments field of the spec',
          true,
        );
        problems += 1;
        continue;
      }
      if (value === null) {
        report(ctx, [...prefix, key], value, 'null is refused', 'a value');
        problems += 1;
        continue;
      }
      check(value, where);
    } catch (err) {
      reportGateError(ctx, err, [], under);
      problems += 1;
    }
  }
  if (requireKey) {
    for (const key of ['externalIP', 'port'] as const) {
      if (args[key] === undefined) {
        const expected = key === 'port' ? 'a port from 1 to 65535' : 'an IP address';
        report(ctx, [...prefix, key], undefined, `missing; expected ${expected}`, expected);
        problems += 1;
      }
    }
  }
  return problems;
}

/** Checks an explicit endpoint list, each endpoint on its own; returns the number of problems. */
export function checkEndpointList(list: readonly unknown[], ctx: z.RefinementCtx, prefix: Path): number {
  let problems = 0;
  list.forEach((ep, i) => {
    try {
      parseRule({ serviceArguments: { externalIP: '192.0.2.1', port: 80 }, endpoints: [ep] });
    } catch (err) {
      reportGateError(ctx, err, prefix, (p) =>
        p[0] === 'endpoints' && p[1] === 0 ? ['endpoints', i, ...p.slice(2)] : p,
      );
      problems += 1;
    }
  });
  return problems;
}

/**
 * Runs the whole rule through `parseRule` (cross-field checks, duplicate endpoints). A loxilb
 * data-plane field the simulator does not model (`INERT_SERVICE_FIELDS`) is refused: in a
 * scenario it could only be ignored, and a setting that changes nothing must not look as if it did.
 */
export function checkWholeRule(rule: unknown, ctx: z.RefinementCtx, prefix: Path): number {
  let parsed: ReturnType<typeof parseRule>;
  try {
    parsed = parseRule(rule);
  } catch (err) {
    reportGateError(ctx, err, prefix);
    return 1;
  }
  let problems = 0;
  if (!parsed.aiGateway) {
    // The gate admits only AI-gateway services; any other rule would run ungated, which a
    // simulation of the gate cannot mean.
    const sa = (rule as { serviceArguments?: Record<string, unknown> }).serviceArguments ?? {};
    report(
      ctx,
      [...prefix, 'serviceArguments', 'sse_mode'],
      sa.sse_mode,
      'the rule is not an AI-gateway service, so the gate would not admit anything through it',
      'mode: 4 with sse_mode: true (or pd_disagg_mode, or an enforcing api_key_auth)',
    );
    problems++;
  }
  for (const f of INERT_SERVICE_FIELDS) {
    const v = parsed.base[f];
    if (v === undefined) continue;
    report(
      ctx,
      [...prefix, 'serviceArguments', f],
      v,
      `${f} is a loxilb data-plane setting the simulator does not model; remove it`,
      'no such field in a scenario',
    );
    problems++;
  }
  return problems;
}

/** Checks a map of `LLB_FC_*` values as the gate reads them; a value the gate would not use as given is an error. */
export function checkEnv(env: Readonly<Record<string, unknown>>, ctx: z.RefinementCtx, prefix: Path): void {
  for (const [name, value] of Object.entries(env)) {
    if (!GATE_ENV_NAMES.includes(name)) {
      const hint = nearest(name, GATE_ENV_NAMES);
      report(
        ctx,
        [...prefix, name],
        value,
        `unknown variable${hint ? ` (did you mean ${hint}?)` : ''}`,
        `one of ${GATE_ENV_NAMES.join(', ')}`,
        true,
      );
      continue;
    }
    if (typeof value !== 'string' && typeof value !== 'number') {
      report(ctx, [...prefix, name], value, `${show(value)} is not a string or number`, 'a string or number');
      continue;
    }
    const { warnings } = readEnv({ [name]: String(value) });
    for (const w of warnings) {
      const text = w.message.startsWith(`${name}: `) ? w.message.slice(name.length + 2) : w.message;
      const cut = text.lastIndexOf('; ');
      const detail =
        cut < 0 ? text : `${text.slice(0, cut)} (the gateway would read it as ${text.slice(cut + 2)})`;
      report(ctx, [...prefix, name], value, detail, 'a value the gate uses as given');
    }
  }
}

/** JSON Schema types of the non-gate serviceArguments fields (the checks in `gate/rule.ts` are code). */
export const BASE_FIELD_JSON: Readonly<Record<string, Record<string, unknown>>> = {
  externalIP: { type: 'string', description: 'Service IP (part of the rule key).' },
  port: { type: 'integer', minimum: 1, maximum: 65535, description: 'Service port (part of the rule key).' },
  portMax: { type: 'integer', minimum: 0, maximum: 65535 },
  protocol: { enum: ['tcp', 'udp', 'sctp'], description: 'Default tcp.' },
  sel: { type: 'integer', minimum: 0, maximum: 100 },
  mode: {
    type: 'integer',
    minimum: 0,
    maximum: 10,
    description: '4 is fullproxy, needed for an AI-gateway service.',
  },
  bgp: { type: 'boolean' },
  monitor: { type: 'boolean' },
  inactiveTimeOut: { type: 'integer', minimum: 0, maximum: 86400 },
  block: { type: 'integer', minimum: 0, maximum: 65535 },
  managed: { type: 'boolean' },
  name: { type: 'string' },
  snat: { type: 'boolean' },
  oper: { type: 'integer', minimum: 0, maximum: 10 },
  probetype: { type: 'string' },
  probeport: { type: 'integer', minimum: 0, maximum: 65535 },
  probereq: { type: 'string' },
  proberesp: { type: 'string' },
  egress: { type: 'boolean' },
  host: { type: 'string' },
  proxyprotocolv2: { type: 'boolean' },
  sockMapMode: { enum: ['none', 'request', 'response', 'both'] },
  connectionLimit: { type: 'integer', minimum: 0, maximum: 10000000 },
  sse_mode: { type: 'boolean', description: 'With mode 4: an AI-gateway service (gated).' },
  pd_disagg_mode: {
    type: 'boolean',
    description: 'With mode 4: a P/D-disaggregated AI-gateway service (gated).',
  },
  api_key_auth: {
    anyOf: [
      { enum: ['disabled', 'optional', 'required', 'jwt', 'apikey-or-jwt'] },
      {
        type: 'object',
        properties: { mode: { enum: ['disabled', 'optional', 'required', 'jwt', 'apikey-or-jwt'] } },
      },
    ],
    description:
      'Credential policy; an enforcing one (required, jwt, apikey-or-jwt) makes a mode-4 rule gated.',
  },
};

/** JSON Schema of one `fc_*` field, from the gate's field table. */
function fcFieldJson(name: (typeof FC_FIELD_NAMES)[number]): Record<string, unknown> {
  const spec = FIELDS[name];
  const env = `Process default ${spec.env.join(', else ')}; product default ${spec.fallback}.`;
  if (spec.kind === 'int') {
    return {
      type: 'integer',
      minimum: 0,
      maximum: spec.max,
      description: `${spec.doc}${spec.unit ? ` Unit: ${spec.unit}.` : ''} ${env}`,
    };
  }
  return {
    enum: [...(spec.kind === 'mode' ? MODE_VALUES : SWITCH_VALUES)],
    description: `${spec.doc} ${env}`,
  };
}

/** JSON Schema of a `serviceArguments` mapping. */
export function serviceArgumentsJson(requireKey: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = { ...BASE_FIELD_JSON };
  for (const name of FC_FIELD_NAMES) properties[name] = fcFieldJson(name);
  return {
    type: 'object',
    description: requireKey
      ? "The rule's serviceArguments, in the spec's field names: paste your rule. Every fc_* field is checked against the gate's bounds."
      : 'The serviceArguments fields to POST in a replace: fc_* fields change the gate in place; an omitted field keeps its stored value, 0 or inherit returns it to the env or default. Other fields are taken from the stored rule unless given (a change there re-creates the entry).',
    properties,
    ...(requireKey ? { required: ['externalIP', 'port'] } : {}),
    additionalProperties: false,
  };
}

/** JSON Schema of an explicit endpoint of a rule. */
export const ENDPOINT_JSON: Readonly<Record<string, unknown>> = {
  type: 'object',
  description:
    'An endpoint as in the rule (endpointIP, targetPort, weight; role is a Sluice extension for P/D pools).',
  properties: {
    endpointIP: { type: 'string' },
    targetPort: { type: 'integer', minimum: 1, maximum: 65535 },
    weight: { type: 'integer', minimum: 0, maximum: 65535, default: 1 },
    role: { enum: ['normal', 'prefill', 'decode'], default: 'normal' },
    state: {},
    counter: {},
  },
  required: ['endpointIP', 'targetPort'],
  additionalProperties: false,
};
