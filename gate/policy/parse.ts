/**
 * Reading a policy from its text: YAML parsed with positions, validated by the strict schema, every
 * problem collected into one PolicyError with `file:line:col`, the field path and the value. File
 * reading stays with the caller (the gate imports no file system).
 */
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { yamlOffset } from '../yaml-source.js';
import { compilePolicy, type Policy } from './compile.js';
import { formatPolicyPath, MAX_LISTED_POLICY_ISSUES, PolicyError, type PolicyIssue } from './errors.js';
import { policyErrorMap, UNKNOWN_KEYS, unknownKeyMessage } from './messages.js';
import { type PolicyDocument, policyFileSchema } from './schema.js';

/** Largest policy text accepted, in UTF-16 units (1 MiB: a policy is a few KiB). */
export const MAX_POLICY_CHARS = 1024 * 1024;

type Path = (string | number)[];

interface Problem {
  path: Path;
  value: unknown;
  detail: string;
  atKey: boolean;
}

function problemsOf(issues: readonly z.core.$ZodIssue[]): Problem[] {
  const out: Problem[] = [];
  for (const iss of issues) {
    const path = iss.path.map((p) => (typeof p === 'number' ? p : String(p)));
    if (iss.code === 'unrecognized_keys') {
      const known = iss.message.startsWith(UNKNOWN_KEYS)
        ? iss.message.slice(UNKNOWN_KEYS.length).split(',').filter(Boolean)
        : [];
      for (const key of iss.keys)
        out.push({ path: [...path, key], value: key, detail: unknownKeyMessage(key, known), atKey: true });
      continue;
    }
    if (iss.code === 'invalid_union' && typeof iss.discriminator === 'string') {
      const value = (iss.input as Record<string, unknown> | null | undefined)?.[iss.discriminator];
      const full = path[path.length - 1] === iss.discriminator ? path : [...path, iss.discriminator];
      out.push({ path: full, value, detail: iss.message, atKey: false });
      continue;
    }
    out.push({ path, value: iss.input, detail: iss.message, atKey: iss.code === 'invalid_key' });
  }
  return out;
}

/**
 * Validates a policy document from its text.
 * @param fileName the file as it should appear in messages
 * @throws PolicyError listing every problem found, in file order
 */
export function parsePolicyDocument(text: string, fileName: string): PolicyDocument {
  const lc = new LineCounter();
  const at = (offset: number, path: Path, value: unknown, detail: string): PolicyIssue => {
    const pos = lc.linePos(offset);
    const where = formatPolicyPath(path);
    return {
      file: fileName,
      line: pos.line,
      col: pos.col,
      path: where,
      value,
      message: `${fileName}:${pos.line}:${pos.col}: ${where === '' ? '' : `${where}: `}${detail}`,
    };
  };
  if (text.length > MAX_POLICY_CHARS) {
    throw new PolicyError(fileName, [
      {
        file: fileName,
        line: 0,
        col: 0,
        path: '',
        value: text.length,
        message: `${fileName}: ${text.length} characters is above the maximum ${MAX_POLICY_CHARS} of a policy file`,
      },
    ]);
  }
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const listed = doc.errors.slice(0, MAX_LISTED_POLICY_ISSUES);
    throw new PolicyError(
      fileName,
      listed.map((e) => at(e.pos[0], [], undefined, `YAML: ${e.message.split('\n')[0]}`)),
      doc.errors.length - listed.length,
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new PolicyError(fileName, [at(0, [], undefined, `YAML: ${(err as Error).message}`)]);
  }
  const parsed = policyFileSchema.safeParse(data ?? {}, { error: policyErrorMap, reportInput: true });
  if (parsed.success) return parsed.data;
  const issues = problemsOf(parsed.error.issues).map((p) =>
    at(yamlOffset(doc, p.path, p.atKey), p.path, p.value, p.detail),
  );
  const seen = new Set<string>();
  const unique = issues.filter((i) => !seen.has(i.message) && seen.add(i.message) !== undefined);
  unique.sort((a, b) => a.line - b.line || a.col - b.col);
  const listed = unique.slice(0, MAX_LISTED_POLICY_ISSUES);
  throw new PolicyError(fileName, listed, unique.length - listed.length);
}

/**
 * Parses, validates and compiles a policy from its text.
 * @throws PolicyError listing every problem found
 */
export function parsePolicy(text: string, fileName: string): Policy {
  return compilePolicy(parsePolicyDocument(text, fileName));
}
