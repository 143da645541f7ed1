/**
 * The one error a policy file raises: every problem found, each placed in the file as
 * `file:line:col: path: detail`, with the field path and the value as given.
 */

import { formatFieldPath, issuesMessage } from '../yaml-source.js';

/** Stable code of a refused policy file (see docs/policy.md). */
export const POLICY_ERROR_CODE = 'SLUICE_E_POLICY';
/** Most problems a PolicyError lists; the rest are counted. */
export const MAX_LISTED_POLICY_ISSUES = 20;

/** One problem in a policy file. */
export interface PolicyIssue {
  readonly file: string;
  /** 1-based line of the offending value (or key, for an unknown key); 0 when not placed. */
  readonly line: number;
  readonly col: number;
  /** Dotted field path, e.g. `classes.batch.queue.max_count`; empty for the file itself. */
  readonly path: string;
  /** The value as given (undefined when missing). */
  readonly value: unknown;
  /** The whole line: `file:line:col: path: detail`. */
  readonly message: string;
}

/** A policy file is invalid; `message` lists every issue, one per line. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  readonly code = POLICY_ERROR_CODE;
  readonly file: string;
  readonly issues: readonly PolicyIssue[];
  readonly omitted: number;

  constructor(file: string, issues: readonly PolicyIssue[], omitted = 0) {
    super(issuesMessage(file, issues, omitted));
    this.file = file;
    this.issues = issues;
    this.omitted = omitted;
  }
}

/** `a.b[2].c` from path segments. */
export const formatPolicyPath = formatFieldPath;

/** True when `err` is a PolicyError (also across realms, by shape). */
export function isPolicyError(err: unknown): err is PolicyError {
  return (
    err instanceof PolicyError ||
    (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === POLICY_ERROR_CODE)
  );
}
