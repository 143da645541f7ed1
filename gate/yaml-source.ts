/**
 * Where a field of a YAML document stands, and how a value reads in a message: shared by every
 * file format Sluice validates with `file:line:col` errors (scenarios, policies). Pure: it works
 * on a parsed `yaml` Document; reading the file is the caller's.
 */
import { type Document, isAlias, isMap, isScalar, isSeq, type Node } from 'yaml';

/** A value as it appears in a message: strings quoted, objects as compact JSON (cut at 80 characters). */
export function showValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    const s = JSON.stringify(value) ?? String(value);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(value);
  }
}

function rangeStart(node: unknown): number | undefined {
  const r = (node as Node | null | undefined)?.range;
  return Array.isArray(r) ? r[0] : undefined;
}

/** The text of a mapping key (a scalar's value, else its string form). */
function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

/**
 * Offset in the source of `path`: its value (with `atKey`, its key), or its nearest ancestor
 * present in the document when the path leaves it (a missing field is placed at its parent).
 */
export function yamlOffset(doc: Document, path: readonly (string | number)[], atKey: boolean): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(seg));
      if (pair === undefined) break;
      const keyStart = rangeStart(pair.key);
      if (atKey && i === path.length - 1 && keyStart !== undefined) return keyStart;
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
  return offset;
}

/** `a.b[2].c` from path segments, as every file-format error names a field. */
export function formatFieldPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? seg : `.${seg}`;
  }
  return out;
}

/** The message of a file-format error: one line per issue listed, then "and N more" when some were cut. */
export function issuesMessage(
  file: string,
  issues: readonly { readonly message: string }[],
  omitted: number,
): string {
  return (
    issues.map((i) => i.message).join('\n') +
    (omitted > 0 ? `\n${file}: and ${omitted} more problem${omitted === 1 ? '' : 's'}` : '')
  );
}

/** How the error messages of scenario and policy files name a zod type (`expected …`). */
export const ZOD_TYPE_NAMES: Readonly<Record<string, string>> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
  record: 'a mapping',
};

/** A value as an error message names it: `null`, `a list`, `a mapping`, or the value itself. */
export function kindOfValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return showValue(v);
}

/** The keys a zod object schema allows (undefined when it is not an object schema). */
export function schemaKeys(inst: unknown): string[] | undefined {
  const shape = (inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def
    ?.shape;
  return shape === undefined ? undefined : Object.keys(shape);
}
