/**
 * A load-balancer rule as the management API carries it
 * (`{"serviceArguments": {...}, "endpoints": [...]}`): strict parsing with
 * the field path, the value and what was expected; the rule key; whether the
 * rule is an AI-gateway service; and the part of a rule outside the gate's
 * fields, which a replace must repeat exactly to change the gate in place.
 */
import { type ParsedFc, parseFcFields } from './config.js';
import type { EndpointRole } from './endpoints.js';
import { formatValue, GateError } from './errors.js';
import { ipFamily } from './ip.js';

/** An endpoint of a rule. */
export interface RuleEndpoint {
  endpointIP: string;
  targetPort: number;
  /** Relative share of new requests. @default 1 */
  weight: number;
  /** Sluice extension for P/D pools: the role the endpoint serves. @default 'normal' */
  role: EndpointRole;
}

/** A parsed rule: the non-gate service arguments, the gate fields, the endpoints. */
export interface ParsedRule {
  key: string;
  /** `externalIP:port`, the service label of metrics. */
  service: string;
  externalIP: string;
  port: number;
  protocol: string;
  /** True for a mode-4 rule with sse_mode, pd_disagg_mode or an enforcing api_key_auth. */
  aiGateway: boolean;
  /** Every serviceArguments field outside the fc_* set, as given. */
  base: Record<string, unknown>;
  fc: ParsedFc;
  endpoints: RuleEndpoint[];
}

type Check = (v: unknown, where: string) => void;

const isInt =
  (lo: number, hi: number): Check =>
  (v, where) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      throw new GateError('SLUICE_E_FIELD_TYPE', where, v, `an integer from ${lo} to ${hi}`);
    }
    if (v < lo || v > hi) {
      throw new GateError(
        'SLUICE_E_FIELD_BOUND',
        where,
        v,
        `an integer from ${lo} to ${hi}`,
        `${where}: ${v} is ${v < lo ? `below the minimum ${lo}` : `above the maximum ${hi}`}`,
      );
    }
  };
const isString: Check = (v, where) => {
  if (typeof v !== 'string') throw new GateError('SLUICE_E_FIELD_TYPE', where, v, 'a string');
};
const isIp: Check = (v, where) => {
  isString(v, where);
  if (ipFamily(v as string) === 0) {
    throw new GateError('SLUICE_E_FIELD_VALUE', where, v, 'an IPv4 or IPv6 address');
  }
};
const isBool: Check = (v, where) => {
  if (typeof v !== 'boolean') throw new GateError('SLUICE_E_FIELD_TYPE', where, v, 'true or false');
};
const oneOf =
  (...allowed: string[]): Check =>
  (v, where) => {
    if (typeof v !== 'string' || !allowed.includes(v)) {
      throw new GateError(
        typeof v === 'string' ? 'SLUICE_E_FIELD_VALUE' : 'SLUICE_E_FIELD_TYPE',
        where,
        v,
        `one of ${allowed.join(', ')}`,
      );
    }
  };
const API_KEY_MODES = ['disabled', 'optional', 'required', 'jwt', 'apikey-or-jwt'];
const ENFORCING_API_KEY_MODES = new Set(['required', 'jwt', 'apikey-or-jwt']);
const apiKeyAuth: Check = (v, where) => {
  if (typeof v === 'string') return oneOf(...API_KEY_MODES)(v, where);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new GateError(
      'SLUICE_E_FIELD_TYPE',
      where,
      v,
      `one of ${API_KEY_MODES.join(', ')}, or an object with "mode"`,
    );
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (k !== 'mode' && k !== 'tenant_claim') {
      throw new GateError('SLUICE_E_FIELD_UNKNOWN', `${where}.${k}`, o[k], 'mode, tenant_claim');
    }
  }
  if (o.mode === undefined)
    throw new GateError('SLUICE_E_FIELD_MISSING', `${where}.mode`, undefined, 'a mode');
  oneOf(...API_KEY_MODES)(o.mode, `${where}.mode`);
  if (o.tenant_claim !== undefined) {
    // Honoured or refused, never ignored: only a JWT carries claims, and only an enforcing mode names tenants.
    isString(o.tenant_claim, `${where}.tenant_claim`);
    if (o.tenant_claim === '') {
      throw new GateError('SLUICE_E_FIELD_VALUE', `${where}.tenant_claim`, '', 'a claim name');
    }
    if (o.mode !== 'jwt' && o.mode !== 'apikey-or-jwt') {
      throw new GateError(
        'SLUICE_E_FIELD_VALUE',
        `${where}.tenant_claim`,
        o.tenant_claim,
        'no tenant_claim unless mode is jwt or apikey-or-jwt',
        `${where}.tenant_claim: refused with mode ${formatValue(o.mode)}: only a JWT under an enforcing mode names a tenant by claim`,
      );
    }
  }
};

/**
 * serviceArguments fields a loxilb rule may carry that act in loxilb's data plane (BGP, SNAT,
 * connection limits, its own probes, ...) and that Sluice stores and reads back but does not
 * model: a rule posted from a loxilb export is accepted, and each of these it carries is named in
 * a warning at apply, so nothing is accepted and silently ignored. (`name` is a label, not a
 * behaviour.)
 */
export const INERT_SERVICE_FIELDS: readonly string[] = [
  'portMax',
  'sel',
  'bgp',
  'monitor',
  'inactiveTimeOut',
  'block',
  'managed',
  'snat',
  'oper',
  'probetype',
  'probeport',
  'probereq',
  'proberesp',
  'egress',
  'host',
  'proxyprotocolv2',
  'connectionLimit',
];

/** The warnings for the inert fields `base` carries (see {@link INERT_SERVICE_FIELDS}). */
export function inertFieldWarnings(key: string, base: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const f of INERT_SERVICE_FIELDS) {
    if (base[f] !== undefined)
      out.push(
        `WARNING ${key}: serviceArguments.${f} is stored and read back, but Sluice does not model it (a loxilb data-plane setting)`,
      );
  }
  return out;
}

/** serviceArguments fields outside the gate that a rule may carry, with their checks. */
export const SERVICE_ARGUMENT_FIELDS: Readonly<Record<string, Check>> = {
  externalIP: isIp,
  port: isInt(1, 65535),
  portMax: isInt(0, 65535),
  protocol: oneOf('tcp', 'udp', 'sctp'),
  sel: isInt(0, 100),
  mode: isInt(0, 10),
  bgp: isBool,
  monitor: isBool,
  inactiveTimeOut: isInt(0, 86_400),
  block: isInt(0, 65535),
  managed: isBool,
  name: isString,
  snat: isBool,
  oper: isInt(0, 10),
  probetype: isString,
  probeport: isInt(0, 65535),
  probereq: isString,
  proberesp: isString,
  egress: isBool,
  host: isString,
  proxyprotocolv2: isBool,
  sockMapMode: oneOf('none', 'request', 'response', 'both'),
  connectionLimit: isInt(0, 10_000_000),
  sse_mode: isBool,
  pd_disagg_mode: isBool,
  api_key_auth: apiKeyAuth,
};

const ENDPOINT_FIELDS = new Set(['endpointIP', 'targetPort', 'weight', 'role', 'state', 'counter']);

function asObject(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new GateError('SLUICE_E_FIELD_TYPE', where, v, 'a JSON object');
  }
  return v as Record<string, unknown>;
}

/** Parses a rule strictly. Throws GateError naming the field, the value and what was expected. */
export function parseRule(input: unknown): ParsedRule {
  const top = asObject(input, 'rule');
  for (const k of Object.keys(top)) {
    if (k !== 'serviceArguments' && k !== 'endpoints' && k !== 'secondaryIPs') {
      throw new GateError('SLUICE_E_FIELD_UNKNOWN', k, top[k], 'serviceArguments, endpoints');
    }
  }
  if (top.serviceArguments === undefined) {
    throw new GateError('SLUICE_E_FIELD_MISSING', 'serviceArguments', undefined, 'an object');
  }
  const args = asObject(top.serviceArguments, 'serviceArguments');
  const base: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (k.startsWith('fc_')) continue;
    const where = `serviceArguments.${k}`;
    // Own fields only: `toString`, `constructor`, `__proto__` are unknown fields, not checks.
    const check = Object.hasOwn(SERVICE_ARGUMENT_FIELDS, k) ? SERVICE_ARGUMENT_FIELDS[k] : undefined;
    if (check === undefined) {
      throw new GateError('SLUICE_E_FIELD_UNKNOWN', where, v, 'a known serviceArguments field');
    }
    if (v === null)
      throw new GateError('SLUICE_E_FIELD_NULL', where, v, 'a value', `${where}: null is refused`);
    check(v, where);
    base[k] = v;
  }
  for (const req of ['externalIP', 'port'] as const) {
    if (base[req] === undefined) {
      throw new GateError(
        'SLUICE_E_FIELD_MISSING',
        `serviceArguments.${req}`,
        undefined,
        req === 'port' ? 'a port' : 'an IP',
      );
    }
  }
  const fc = parseFcFields(args, 'serviceArguments');
  const endpoints = parseEndpoints(top.endpoints);
  const externalIP = base.externalIP as string;
  const port = base.port as number;
  const protocol = (base.protocol as string | undefined) ?? 'tcp';
  return {
    key: `${externalIP}:${port}/${protocol}`,
    service: `${externalIP}:${port}`,
    externalIP,
    port,
    protocol,
    aiGateway: isAiGateway(base),
    base,
    fc,
    endpoints,
  };
}

function parseEndpoints(v: unknown): RuleEndpoint[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new GateError('SLUICE_E_FIELD_TYPE', 'endpoints', v, 'an array of endpoints');
  const seen = new Set<string>();
  return v.map((raw, i) => {
    const where = `endpoints[${i}]`;
    const o = asObject(raw, where);
    for (const k of Object.keys(o)) {
      if (!ENDPOINT_FIELDS.has(k)) {
        throw new GateError(
          'SLUICE_E_FIELD_UNKNOWN',
          `${where}.${k}`,
          o[k],
          'endpointIP, targetPort, weight, role',
        );
      }
    }
    if (o.endpointIP === undefined)
      throw new GateError('SLUICE_E_FIELD_MISSING', `${where}.endpointIP`, undefined, 'an IP');
    isString(o.endpointIP, `${where}.endpointIP`);
    if (o.targetPort === undefined)
      throw new GateError('SLUICE_E_FIELD_MISSING', `${where}.targetPort`, undefined, 'a port');
    isInt(1, 65535)(o.targetPort, `${where}.targetPort`);
    if (o.weight !== undefined) isInt(0, 65535)(o.weight, `${where}.weight`);
    if (o.role !== undefined) oneOf('normal', 'prefill', 'decode')(o.role, `${where}.role`);
    const ep: RuleEndpoint = {
      endpointIP: o.endpointIP as string,
      targetPort: o.targetPort as number,
      weight: (o.weight as number | undefined) ?? 1,
      role: (o.role as EndpointRole | undefined) ?? 'normal',
    };
    const id = endpointId(ep);
    if (seen.has(id)) throw new GateError('SLUICE_E_FIELD_VALUE', where, id, 'each endpoint once');
    seen.add(id);
    return ep;
  });
}

/**
 * Checks sockMapMode against the rule a request would meet: the new non-gate fields with the
 * gate fields merged from the stored rule (so a replace carrying only `fc_expose_headers` is
 * judged like a create). Kernel-spliced directions never pass through the gateway: they
 * cannot carry the admission headers, nor an SSE relay, a P/D split or an L7 policy.
 * @param exposeHeaders the merged declared `fc_expose_headers` (undefined when not declared)
 */
export function checkSockMap(
  base: Readonly<Record<string, unknown>>,
  exposeHeaders: boolean | undefined,
): void {
  const sockMap = base.sockMapMode;
  if (sockMap === undefined || sockMap === 'none') return;
  for (const f of ['sse_mode', 'pd_disagg_mode'] as const) {
    if (base[f] === true) {
      throw new GateError(
        'SLUICE_E_SOCKMAP_AI',
        'serviceArguments.sockMapMode',
        sockMap,
        `"none" on a service with ${f}`,
        `serviceArguments.sockMapMode: ${formatValue(sockMap)} is refused on a service with ${f}: its traffic must pass through the gateway`,
      );
    }
  }
  if (exposeHeaders === true && (sockMap === 'both' || sockMap === 'response')) {
    throw new GateError(
      'SLUICE_E_EXPOSE_SOCKMAP',
      'serviceArguments.fc_expose_headers',
      'on',
      'off while sockMapMode is both or response',
      `serviceArguments.fc_expose_headers: "on" is refused with sockMapMode ${formatValue(sockMap)}: those responses never pass through the gateway`,
    );
  }
}

/** `IP:port` of an endpoint (IPv6 in brackets). */
export function endpointId(ep: Pick<RuleEndpoint, 'endpointIP' | 'targetPort'>): string {
  return ep.endpointIP.includes(':')
    ? `[${ep.endpointIP}]:${ep.targetPort}`
    : `${ep.endpointIP}:${ep.targetPort}`;
}

/** An AI-gateway service: mode 4 (fullproxy) with sse_mode, pd_disagg_mode or an enforcing api_key_auth. */
export function isAiGateway(base: Readonly<Record<string, unknown>>): boolean {
  if (base.mode !== 4) return false;
  if (base.sse_mode === true || base.pd_disagg_mode === true) return true;
  const auth = base.api_key_auth;
  const mode = typeof auth === 'string' ? auth : (auth as { mode?: string } | undefined)?.mode;
  return mode !== undefined && ENFORCING_API_KEY_MODES.has(mode);
}

/** Canonical text of everything outside the gate's fields, to tell an in-place change from a re-create. */
export function nonGateFingerprint(r: ParsedRule): string {
  return canonical({ base: r.base, endpoints: r.endpoints });
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
