/**
 * Reading a scenario file: YAML parsed with positions, validated by the schema and the cross-section
 * checks, every problem collected into one ScenarioError with `file:line:col`, the field path, the
 * value and what was expected. The result is in normal form and deep-frozen.
 */
import { open } from 'node:fs/promises';
import { type Document, isScalar, LineCounter, type Node, parseDocument, visit } from 'yaml';
import type { z } from 'zod';
import { yamlOffset } from '../../gate/index.js';
import { formatPath, MAX_LISTED_ISSUES, ScenarioError, type ScenarioIssue } from './errors.js';
import { decode, type IssueText, nearest, scenarioErrorMap } from './issues.js';
import type { PlacedIn } from './policy-section.js';
import { type ResolveOptions, resolveScenario, type Scenario } from './resolve.js';
import { scenarioFileSchema } from './schema.js';

/**
 * Largest scenario file, in bytes (4 MiB: the biggest shipped scenario is a few KiB; inline
 * traces beyond this belong in a trace file). A larger file is refused before it is parsed.
 */
export const MAX_SCENARIO_BYTES = 4 * 1024 * 1024;

/**
 * Problems collected in full (located, hinted) before the rest are only counted: enough to
 * list the first {@link MAX_LISTED_ISSUES} in file order, bounded however many there are.
 */
const MAX_COLLECTED_PROBLEMS = 10 * MAX_LISTED_ISSUES;

/** Options of {@link parseScenarioText} and {@link loadScenario}. */
export type ScenarioLoadOptions = ResolveOptions;

type Path = (string | number)[];

interface Located {
  line: number;
  col: number;
}

/** Where `path` is in the document: the value (or, with `atKey`, the key) or its nearest ancestor. */
function locate(doc: Document, lc: LineCounter, path: readonly (string | number)[], atKey: boolean): Located {
  const pos = lc.linePos(yamlOffset(doc, path, atKey));
  return { line: pos.line, col: pos.col };
}

/** Where a mapping repeats a scalar key (as yaml's uniqueKeys finds them), in one pass with a set per mapping. */
function duplicateKeyOffsets(doc: Document): number[] {
  const out: number[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const v = pair.key.value;
        const k = `${typeof v}:${String(v)}`;
        if (seen.has(k)) out.push(rangeStart(pair.key) ?? 0);
        else seen.add(k);
      }
    },
  });
  return out;
}

function rangeStart(node: unknown): number | undefined {
  const r = (node as Node | null | undefined)?.range;
  return Array.isArray(r) ? r[0] : undefined;
}

interface Problem extends IssueText {
  path: Path;
  value: unknown;
  atKey: boolean;
  /** Placed in another file (the scenario's policy): reported as that file words it. */
  placed?: PlacedIn;
}

/**
 * Zod issues as problems: one per unknown key, the rest as they come; past `max` problems the
 * rest are only counted.
 */
function problemsOf(issues: readonly z.core.$ZodIssue[], max: number): { problems: Problem[]; more: number } {
  const out: Problem[] = [];
  let more = 0;
  for (const iss of issues) {
    if (out.length >= max) {
      more += iss.code === 'unrecognized_keys' ? iss.keys.length : 1;
      continue;
    }
    const path = iss.path.map((p) => (typeof p === 'number' ? p : String(p)));
    const text = decode(iss.message);
    if (iss.code === 'unrecognized_keys') {
      const room = max - out.length;
      for (const key of iss.keys.slice(0, room)) out.push(unknownKey([...path, key], text));
      more += Math.max(0, iss.keys.length - room);
      continue;
    }
    if (text.detail === 'unknown key' && text.known !== undefined) {
      out.push(unknownKey(path, text));
      continue;
    }
    out.push({
      detail: text.detail,
      expected: text.expected,
      path,
      value: iss.input,
      atKey: text.atKey === true,
    });
  }
  return { problems: out, more };
}

function unknownKey(path: Path, text: IssueText): Problem {
  const key = String(path[path.length - 1]);
  const hint = text.known === undefined ? undefined : nearest(key, text.known);
  return {
    detail: hint ? `unknown key (did you mean ${hint}?)` : `unknown key; expected ${text.expected}`,
    expected: text.expected,
    path,
    value: key,
    atKey: true,
  };
}

/**
 * Parses and validates a scenario from its text.
 * @param fileName the file as it should appear in messages; relative data files are looked up beside it
 * @throws ScenarioError listing every problem found
 */
export function parseScenarioText(
  text: string,
  fileName: string,
  options: ScenarioLoadOptions = {},
): Scenario {
  const lc = new LineCounter();
  // A UTF-8 byte count is at most 3 per UTF-16 unit: count the bytes only when it could matter.
  if (text.length * 3 > MAX_SCENARIO_BYTES) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MAX_SCENARIO_BYTES) throw fileTooLarge(fileName, bytes);
  }
  // yaml's own uniqueKeys check compares every key with every other (minutes for 40,000 keys).
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: false });
  const issue = (
    loc: Located,
    path: Path,
    value: unknown,
    detail: string,
    expected: string,
  ): ScenarioIssue => {
    const where = formatPath(path);
    return {
      file: fileName,
      line: loc.line,
      col: loc.col,
      path: where,
      value,
      expected,
      message: `${fileName}:${loc.line}:${loc.col}: ${where === '' ? '' : `${where}: `}${detail}`,
    };
  };
  const yamlErrors = [
    ...doc.errors.map((e) => ({ offset: e.pos[0], message: e.message.split('\n')[0]! })),
    ...duplicateKeyOffsets(doc).map((offset) => ({ offset, message: 'Map keys must be unique' })),
  ];
  if (yamlErrors.length > 0) {
    yamlErrors.sort((a, b) => a.offset - b.offset);
    throw new ScenarioError(
      fileName,
      yamlErrors
        .slice(0, MAX_LISTED_ISSUES)
        .map((e) => issue(lc.linePos(e.offset), [], undefined, `YAML: ${e.message}`, 'valid YAML')),
      Math.max(0, yamlErrors.length - MAX_LISTED_ISSUES),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    throw new ScenarioError(fileName, [
      issue({ line: 1, col: 1 }, [], undefined, `YAML: ${(err as Error).message}`, 'valid YAML'),
    ]);
  }
  const problems: Problem[] = [];
  let more = 0;
  const parsed = scenarioFileSchema.safeParse(data ?? {}, { error: scenarioErrorMap, reportInput: true });
  let scenario: Scenario | undefined;
  if (!parsed.success) {
    const found = problemsOf(parsed.error.issues, MAX_COLLECTED_PROBLEMS);
    problems.push(...found.problems);
    more = found.more;
  } else {
    scenario = resolveScenario(
      fileName,
      parsed.data,
      (path, value, detail, expected, placed) => {
        if (problems.length < MAX_COLLECTED_PROBLEMS)
          problems.push({ path, value, detail, expected, atKey: false, ...(placed ? { placed } : {}) });
        else more++;
      },
      options,
    );
  }
  if (problems.length > 0 || scenario === undefined) {
    const issues = problems.map((p) =>
      p.placed === undefined
        ? issue(locate(doc, lc, p.path, p.atKey), p.path, p.value, p.detail, p.expected)
        : {
            file: p.placed.file,
            line: p.placed.line,
            col: p.placed.col,
            path: p.placed.path,
            value: p.value,
            expected: p.expected,
            message: p.placed.message,
          },
    );
    const seen = new Set<string>();
    const unique = issues.filter((i) => {
      if (seen.has(i.message)) return false;
      seen.add(i.message);
      return true;
    });
    // The scenario's own problems first, then those of the files it references, each in file order.
    const rank = (i: ScenarioIssue): number => (i.file === fileName ? 0 : 1);
    unique.sort((a, b) => rank(a) - rank(b) || a.line - b.line || a.col - b.col);
    const listed = unique.slice(0, MAX_LISTED_ISSUES);
    throw new ScenarioError(fileName, listed, unique.length - listed.length + more);
  }
  return deepFreeze(scenario);
}

/**
 * Reads, parses and validates a scenario file.
 * @throws ScenarioError listing every problem found (an unreadable file is one problem)
 */
export async function loadScenario(path: string, options: ScenarioLoadOptions = {}): Promise<Scenario> {
  let text: string;
  try {
    text = await readBounded(path);
  } catch (err) {
    if (err instanceof ScenarioError) throw err;
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ScenarioError(path, [
      {
        file: path,
        line: 0,
        col: 0,
        path: '',
        value: path,
        expected: 'a readable scenario file',
        message: `${path}: cannot read the file (${reason})`,
      },
    ]);
  }
  return parseScenarioText(text, path, options);
}

function fileTooLarge(file: string, bytes: number | string): ScenarioError {
  const expected = `a scenario file of at most ${MAX_SCENARIO_BYTES} bytes (4 MiB)`;
  return new ScenarioError(file, [
    {
      file,
      line: 0,
      col: 0,
      path: '',
      value: bytes,
      expected,
      message: `${file}: the file is ${bytes} bytes; expected ${expected} (put long traces in a trace file)`,
    },
  ]);
}

/**
 * Reads a file as UTF-8, refusing it once it passes {@link MAX_SCENARIO_BYTES}: by its size
 * when it has one, else (a pipe, a device) after reading one byte more than the limit.
 */
async function readBounded(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const st = await handle.stat();
    if (st.isFile() && st.size > MAX_SCENARIO_BYTES) throw fileTooLarge(path, st.size);
    const buf = Buffer.alloc(MAX_SCENARIO_BYTES + 1);
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await handle.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > MAX_SCENARIO_BYTES) throw fileTooLarge(path, `more than ${MAX_SCENARIO_BYTES}`);
    return buf.toString('utf8', 0, n);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Freezes an object graph (plain objects and arrays). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
