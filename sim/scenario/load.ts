/**
 * Reading a scenario file: YAML parsed with positions, validated by the schema and the cross-section
 * checks, every problem collected into one ScenarioError with `file:line:col`, the field path, the
 * value and what was expected. The result is in normal form and deep-frozen.
 */
import { readFile } from 'node:fs/promises';
import { type Document, isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { z } from 'zod';
import { formatPath, ScenarioError, type ScenarioIssue } from './errors.js';
import { decode, type IssueText, nearest, scenarioErrorMap } from './issues.js';
import { type ResolveOptions, resolveScenario, type Scenario } from './resolve.js';
import { scenarioFileSchema } from './schema.js';

/** Options of {@link parseScenarioText} and {@link loadScenario}. */
export type ScenarioLoadOptions = ResolveOptions;

type Path = (string | number)[];

interface Located {
  line: number;
  col: number;
}

/** Where `path` is in the document: the value (or, with `atKey`, the key) or its nearest ancestor. */
function locate(doc: Document, lc: LineCounter, path: readonly (string | number)[], atKey: boolean): Located {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(seg));
      if (pair === undefined) break;
      const keyStart = rangeStart(pair.key);
      if (atKey && i === path.length - 1 && keyStart !== undefined) {
        offset = keyStart;
        break;
      }
      node = pair.value;
      offset = rangeStart(node) ?? keyStart ?? offset;
      if (pair.value === null || pair.value === undefined) break;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) break;
      node = item;
      offset = rangeStart(item) ?? offset;
    } else break;
  }
  const pos = lc.linePos(offset);
  return { line: pos.line, col: pos.col };
}

function rangeStart(node: unknown): number | undefined {
  const r = (node as Node | null | undefined)?.range;
  return Array.isArray(r) ? r[0] : undefined;
}

function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

interface Problem extends IssueText {
  path: Path;
  value: unknown;
  atKey: boolean;
}

/** Zod issues as problems: one per unknown key, the rest as they come. */
function problemsOf(issues: readonly z.core.$ZodIssue[]): Problem[] {
  const out: Problem[] = [];
  for (const iss of issues) {
    const path = iss.path.map((p) => (typeof p === 'number' ? p : String(p)));
    const text = decode(iss.message);
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) out.push(unknownKey([...path, key], text));
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
  return out;
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
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
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
  if (doc.errors.length > 0) {
    throw new ScenarioError(
      fileName,
      doc.errors.map((e) => {
        const pos = lc.linePos(e.pos[0]);
        return issue(pos, [], undefined, `YAML: ${e.message.split('\n')[0]}`, 'valid YAML');
      }),
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
  const parsed = scenarioFileSchema.safeParse(data ?? {}, { error: scenarioErrorMap, reportInput: true });
  let scenario: Scenario | undefined;
  if (!parsed.success) problems.push(...problemsOf(parsed.error.issues));
  else {
    scenario = resolveScenario(
      fileName,
      parsed.data,
      (path, value, detail, expected) => problems.push({ path, value, detail, expected, atKey: false }),
      options,
    );
  }
  if (problems.length > 0 || scenario === undefined) {
    const issues = problems.map((p) =>
      issue(locate(doc, lc, p.path, p.atKey), p.path, p.value, p.detail, p.expected),
    );
    const seen = new Set<string>();
    const unique = issues.filter((i) => {
      if (seen.has(i.message)) return false;
      seen.add(i.message);
      return true;
    });
    unique.sort((a, b) => a.line - b.line || a.col - b.col);
    throw new ScenarioError(fileName, unique);
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
    text = await readFile(path, 'utf8');
  } catch (err) {
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

/** Freezes an object graph (plain objects and arrays). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
