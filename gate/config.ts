/**
 * Rule configuration: parsing the `fc_*` fields a rule declares, reading the
 * process environment, and resolving each value per rule (rule, else env,
 * else product default) with the source of every value.
 */
import { formatValue, GateError } from './errors.js';
import {
  DEFAULT_QUEUE_WAIT_WITH_DEPTH_MS,
  FC_FIELD_NAMES,
  type FcFieldName,
  FIELDS,
  type GateMode,
  MODE_VALUES,
  SWITCH_VALUES,
} from './fields.js';
import { nearestName } from './nearest.js';

/** What a rule declares; an absent key inherits (0 and `inherit` are stored as absent). */
export interface DeclaredFc {
  fc_mode?: GateMode;
  fc_max_outstanding?: number;
  fc_ep_max_inflight?: number;
  fc_prefill_max_inflight?: number;
  fc_decode_max_inflight?: number;
  fc_max_queue_depth?: number;
  fc_max_queue_wait_ms?: number;
  fc_adaptive?: boolean;
  fc_ttft_target_ms?: number;
  fc_telemetry_stale_ms?: number;
  fc_warmup_ms?: number;
  fc_tenant_max_share_pct?: number;
  fc_expose_headers?: boolean;
}

/** Where a value in force came from. */
export type ValueSource = 'rule' | 'env' | 'default';

/** The values in force on a pool. All times in ms; ceilings of 0 are unlimited. */
export interface ResolvedConfig {
  mode: GateMode;
  maxOutstanding: number;
  epMaxInflight: number;
  prefillMaxInflight: number;
  decodeMaxInflight: number;
  queueDepth: number;
  queueWaitMs: number;
  adaptive: boolean;
  ttftTargetMs: number;
  telemetryStaleMs: number;
  warmupMs: number;
  /** 0 when no share is in force (0, 100 or omitted). */
  tenantMaxSharePct: number;
  exposeHeaders: boolean;
  /** Source of each value, keyed by the rule field name. */
  source: Record<FcFieldName, ValueSource>;
}

/** The process environment as the gate reads it: `LLB_FC_*` values, already parsed. */
export type EnvFc = DeclaredFc;

/** Result of parsing a rule's fc fields: what it declares and which fields it carried. */
export interface ParsedFc {
  declared: DeclaredFc;
  /** Fields present in the input (explicit 0 and inherit included). */
  present: Set<FcFieldName>;
}

const FC_SET: ReadonlySet<string> = new Set(FC_FIELD_NAMES);

/** True when `name` is one of the gate's rule fields. */
export function isFcField(name: string): name is FcFieldName {
  return FC_SET.has(name);
}

/**
 * Parses the `fc_*` fields of a serviceArguments object strictly: JSON null,
 * wrong types, out-of-range numbers, unknown values and unknown `fc_` names
 * are GateErrors naming the field, the value and the bound. Non-fc keys and
 * `fc_effective` (read-only) are ignored here.
 * @param path prefix for error paths, e.g. `serviceArguments`.
 */
export function parseFcFields(args: Readonly<Record<string, unknown>>, path = 'serviceArguments'): ParsedFc {
  const declared: DeclaredFc = {};
  const present = new Set<FcFieldName>();
  for (const [key, raw] of Object.entries(args)) {
    if (!key.startsWith('fc_') || key === 'fc_effective') continue;
    const where = path ? `${path}.${key}` : key;
    if (!isFcField(key)) {
      const hint = nearestField(key);
      throw new GateError(
        'SLUICE_E_FIELD_UNKNOWN',
        where,
        raw,
        `one of ${FC_FIELD_NAMES.join(', ')}`,
        `${where}: unknown field${hint ? ` (did you mean ${hint}?)` : ''}`,
      );
    }
    present.add(key);
    setDeclared(declared, key, parseRuleValue(key, raw, where));
  }
  return { declared, present };
}

function setDeclared(
  declared: DeclaredFc,
  key: FcFieldName,
  value: number | boolean | GateMode | undefined,
): void {
  const rec = declared as Record<FcFieldName, unknown>;
  if (value === undefined) delete rec[key];
  else rec[key] = value;
}

/** Parses one rule value; `undefined` means "declares nothing" (0 or inherit). */
function parseRuleValue(
  key: FcFieldName,
  raw: unknown,
  where: string,
): number | boolean | GateMode | undefined {
  const spec = FIELDS[key];
  if (raw === null) {
    throw new GateError(
      'SLUICE_E_FIELD_NULL',
      where,
      raw,
      spec.kind === 'int' ? `an integer from 0 to ${spec.max}` : 'a string',
      `${where}: null is refused; send 0 or "inherit" to return to the environment or default`,
    );
  }
  if (spec.kind === 'int') {
    if (typeof raw !== 'number' || !Number.isFinite(raw)) {
      throw new GateError('SLUICE_E_FIELD_TYPE', where, raw, `an integer from 0 to ${spec.max}`);
    }
    if (!Number.isInteger(raw)) {
      throw new GateError('SLUICE_E_FIELD_TYPE', where, raw, `an integer from 0 to ${spec.max}`);
    }
    if (raw < 0) {
      throw new GateError(
        'SLUICE_E_FIELD_BOUND',
        where,
        raw,
        `an integer from 0 to ${spec.max}`,
        `${where}: ${raw} is below the minimum 0`,
      );
    }
    if (spec.max !== undefined && raw > spec.max) {
      throw new GateError(
        'SLUICE_E_FIELD_BOUND',
        where,
        raw,
        `an integer from 0 to ${spec.max}`,
        `${where}: ${raw} is above the maximum ${spec.max}`,
      );
    }
    if (raw === 0) return undefined;
    if (key === 'fc_tenant_max_share_pct' && raw === 100) return 100;
    return raw;
  }
  const allowed: readonly string[] = spec.kind === 'mode' ? MODE_VALUES : SWITCH_VALUES;
  if (typeof raw !== 'string') {
    throw new GateError('SLUICE_E_FIELD_TYPE', where, raw, `one of ${allowed.join(', ')}`);
  }
  const v = raw.trim().toLowerCase();
  if (!allowed.includes(v)) {
    throw new GateError(
      'SLUICE_E_FIELD_VALUE',
      where,
      raw,
      `one of ${allowed.join(', ')}`,
      `${where}: ${formatValue(raw)} is not one of ${allowed.join(', ')}`,
    );
  }
  if (v === 'inherit') return undefined;
  if (spec.kind === 'mode') return v as GateMode;
  return v === 'on';
}

/** A note about an environment value the gate could not use as given. */
export interface EnvWarning {
  variable: string;
  value: string;
  message: string;
}

/**
 * Reads the `LLB_FC_*` process defaults leniently, as a gateway does at start:
 * an unknown mode is off, a bad number is unset, a share above 100 is no share.
 * Each such value yields a warning instead of an error.
 */
export function readEnv(env: Readonly<Record<string, string | undefined>>): {
  env: EnvFc;
  warnings: EnvWarning[];
} {
  const out: EnvFc = {};
  const warnings: EnvWarning[] = [];
  for (const key of FC_FIELD_NAMES) {
    const spec = FIELDS[key];
    for (const variable of spec.env) {
      const raw = env[variable];
      if (raw === undefined || raw.trim() === '') continue;
      const v = raw.trim().toLowerCase();
      if (spec.kind === 'int') {
        const n = /^\d+$/.test(v) ? Number(v) : Number.NaN;
        if (!Number.isSafeInteger(n)) {
          warnings.push({
            variable,
            value: raw,
            message: `${variable}: ${formatValue(raw)} is not a number; unset`,
          });
          continue;
        }
        if (key === 'fc_tenant_max_share_pct' && n > 100) {
          warnings.push({ variable, value: raw, message: `${variable}: ${n} is above 100; no share` });
          break;
        }
        if (spec.max !== undefined && n > spec.max) {
          warnings.push({
            variable,
            value: raw,
            message: `${variable}: ${n} is above the maximum ${spec.max}; unset`,
          });
          continue;
        }
        if (n > 0) setDeclared(out, key, n);
        break;
      }
      if (spec.kind === 'mode') {
        if (v === 'off' || v === 'observe' || v === 'enforce') setDeclared(out, key, v);
        else {
          warnings.push({
            variable,
            value: raw,
            message: `${variable}: ${formatValue(raw)} is not a mode; off`,
          });
          setDeclared(out, key, 'off');
        }
        break;
      }
      if (v === 'on' || v === 'off') setDeclared(out, key, v === 'on');
      else
        warnings.push({
          variable,
          value: raw,
          message: `${variable}: ${formatValue(raw)} is not on/off; unset`,
        });
      break;
    }
  }
  return { env: out, warnings };
}

/**
 * Resolves what is in force: for each field the rule's value, else the env's,
 * else the product default; a depth with no window anywhere gets 5000 ms.
 */
export function resolveConfig(declared: Readonly<DeclaredFc>, env: Readonly<EnvFc>): ResolvedConfig {
  const source = {} as Record<FcFieldName, ValueSource>;
  const pick = <K extends FcFieldName>(key: K): NonNullable<DeclaredFc[K]> | undefined => {
    const r = declared[key];
    if (r !== undefined) {
      source[key] = 'rule';
      return r as NonNullable<DeclaredFc[K]>;
    }
    const e = env[key];
    if (e !== undefined) {
      source[key] = 'env';
      return e as NonNullable<DeclaredFc[K]>;
    }
    source[key] = 'default';
    return undefined;
  };
  const num = (key: FcFieldName): number => {
    const v = pick(key);
    return typeof v === 'number' ? v : (FIELDS[key].fallback as number);
  };
  const sw = (key: 'fc_adaptive' | 'fc_expose_headers'): boolean => {
    const v = pick(key);
    return typeof v === 'boolean' ? v : FIELDS[key].fallback === 'on';
  };
  const mode = (pick('fc_mode') ?? FIELDS.fc_mode.fallback) as GateMode;
  const queueDepth = num('fc_max_queue_depth');
  let queueWaitMs = num('fc_max_queue_wait_ms');
  if (queueDepth > 0 && queueWaitMs === 0) queueWaitMs = DEFAULT_QUEUE_WAIT_WITH_DEPTH_MS;
  const share = num('fc_tenant_max_share_pct');
  return {
    mode,
    maxOutstanding: num('fc_max_outstanding'),
    epMaxInflight: num('fc_ep_max_inflight'),
    prefillMaxInflight: num('fc_prefill_max_inflight'),
    decodeMaxInflight: num('fc_decode_max_inflight'),
    queueDepth,
    queueWaitMs,
    adaptive: sw('fc_adaptive'),
    ttftTargetMs: num('fc_ttft_target_ms'),
    telemetryStaleMs: num('fc_telemetry_stale_ms'),
    warmupMs: num('fc_warmup_ms'),
    tenantMaxSharePct: share >= 100 ? 0 : share,
    exposeHeaders: sw('fc_expose_headers'),
    source,
  };
}

/**
 * Applies a replace's fields onto the stored declaration: omitted fields keep
 * their stored values, 0/inherit return to env/default. Refuses (throws) a
 * result that leaves a declared depth with an explicit wait of 0; the stored
 * declaration is never modified.
 */
export function mergeDeclared(
  stored: Readonly<DeclaredFc>,
  change: ParsedFc,
  path = 'serviceArguments',
): DeclaredFc {
  const merged: DeclaredFc = { ...stored };
  for (const key of change.present) setDeclared(merged, key, change.declared[key]);
  checkDepthHasWait(merged, change, path);
  return merged;
}

/** The rule a request leaves behind must not carry a depth with a wait of 0. */
export function checkDepthHasWait(
  merged: Readonly<DeclaredFc>,
  change: ParsedFc,
  path = 'serviceArguments',
): void {
  const depth = merged.fc_max_queue_depth ?? 0;
  if (
    depth > 0 &&
    change.present.has('fc_max_queue_wait_ms') &&
    change.declared.fc_max_queue_wait_ms === undefined
  ) {
    throw new GateError(
      'SLUICE_E_DEPTH_WITHOUT_WAIT',
      `${path}.fc_max_queue_wait_ms`,
      0,
      `an integer from 1 to ${FIELDS.fc_max_queue_wait_ms.max} while fc_max_queue_depth is ${depth}`,
      `${path}.fc_max_queue_wait_ms: 0 is refused while fc_max_queue_depth is ${depth}: a depth needs a wait window greater than 0`,
    );
  }
}

function nearestField(key: string): string | undefined {
  return nearestName(key, FC_FIELD_NAMES, 4);
}
