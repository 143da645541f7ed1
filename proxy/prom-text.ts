/**
 * A small, strict-enough parser of the Prometheus text exposition format
 * (0.0.4, and the sample lines of OpenMetrics): `# HELP`/`# TYPE` and other
 * comments, metric names with colons, labels with `\\`, `\"` and `\n`
 * escapes, special values (NaN, +Inf, -Inf), optional timestamps.
 * Lines that do not parse are skipped and counted, never thrown.
 */

/** One parsed sample. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of one exposition, with the number of lines that did not parse. */
export interface PromParse {
  samples: PromSample[];
  /** Declared types by family name (`# TYPE`). */
  types: Map<string, string>;
  /** Non-comment lines that could not be parsed. */
  badLines: number;
}

const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
const LABEL_START = /[a-zA-Z_]/;
const LABEL_CHAR = /[a-zA-Z0-9_]/;

/** Parses an exposition text. */
export function parsePrometheusText(text: string): PromParse {
  const samples: PromSample[] = [];
  const types = new Map<string, string>();
  let badLines = 0;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const t = line.trim();
    if (t === '') continue;
    if (t.startsWith('#')) {
      const m = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(t);
      if (m) types.set(m[1]!, m[2]!);
      continue;
    }
    const s = parseSampleLine(t);
    if (s === null) badLines++;
    else samples.push(s);
  }
  return { samples, types, badLines };
}

/** Parses one sample line, or returns null. */
export function parseSampleLine(line: string): PromSample | null {
  let i = 0;
  const n = line.length;
  if (i >= n || !NAME_START.test(line[i]!)) return null;
  const start = i;
  while (i < n && NAME_CHAR.test(line[i]!)) i++;
  const name = line.slice(start, i);
  const labels: Record<string, string> = {};
  while (i < n && (line[i] === ' ' || line[i] === '\t')) i++;
  if (line[i] === '{') {
    i++;
    for (;;) {
      while (i < n && (line[i] === ' ' || line[i] === '\t')) i++;
      if (line[i] === '}') {
        i++;
        break;
      }
      if (i >= n || !LABEL_START.test(line[i]!)) return null;
      const ls = i;
      while (i < n && LABEL_CHAR.test(line[i]!)) i++;
      const key = line.slice(ls, i);
      while (i < n && (line[i] === ' ' || line[i] === '\t')) i++;
      if (line[i] !== '=') return null;
      i++;
      while (i < n && (line[i] === ' ' || line[i] === '\t')) i++;
      if (line[i] !== '"') return null;
      i++;
      let value = '';
      for (;;) {
        if (i >= n) return null;
        const c = line[i]!;
        if (c === '\\') {
          const e = line[i + 1];
          if (e === undefined) return null;
          value += e === 'n' ? '\n' : e;
          i += 2;
          continue;
        }
        if (c === '"') {
          i++;
          break;
        }
        value += c;
        i++;
      }
      labels[key] = value;
      while (i < n && (line[i] === ' ' || line[i] === '\t')) i++;
      if (line[i] === ',') {
        i++;
        continue;
      }
      if (line[i] === '}') {
        i++;
        break;
      }
      return null;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  const v = rest[0];
  if (v === undefined || v === '' || rest.length > 2) return null;
  const value = parseValue(v);
  if (value === null) return null;
  return { name, labels, value };
}

function parseValue(v: string): number | null {
  switch (v) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) return null;
  return Number(v);
}

/** The names under which engines export their waiting-request gauge (colon and underscore generations). */
export const WAITING_METRIC_NAMES = ['vllm:num_requests_waiting', 'vllm_num_requests_waiting'] as const;

/**
 * Requests waiting in an engine: the sum of every `vllm:num_requests_waiting`
 * series (one per engine/model label set), under either name generation.
 * @returns the sum, or null when the exposition has no such series
 */
export function numRequestsWaiting(text: string): number | null {
  const { samples } = parsePrometheusText(text);
  let sum = 0;
  let seen = false;
  for (const s of samples) {
    if ((WAITING_METRIC_NAMES as readonly string[]).includes(s.name) && Number.isFinite(s.value)) {
      sum += s.value;
      seen = true;
    }
  }
  return seen ? sum : null;
}
