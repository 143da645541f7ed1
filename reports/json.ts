/**
 * JSON text for `.vl.json` files: indented like JSON.stringify(v, null, 2),
 * except that an array of flat objects or scalars (inlined data rows) puts
 * one element per line, so a long run's spec stays readable and small.
 */

function isScalar(v: unknown): boolean {
  return v === null || typeof v !== 'object';
}

function isFlat(v: unknown): boolean {
  if (isScalar(v)) return true;
  if (Array.isArray(v)) return v.every(isScalar);
  return Object.values(v as Record<string, unknown>).every(isScalar);
}

function write(v: unknown, indent: string): string {
  if (isScalar(v)) return JSON.stringify(v) ?? 'null';
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    if (v.every(isFlat)) return `[\n${v.map((e) => `${inner}${JSON.stringify(e)}`).join(',\n')}\n${indent}]`;
    return `[\n${v.map((e) => `${inner}${write(e, inner)}`).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${write(x, inner)}`).join(',\n')}\n${indent}}`;
}

/** Formats a JSON value (ending with a newline). JSON.parse gives the value back. */
export function formatJson(value: unknown): string {
  return `${write(value, '')}\n`;
}
