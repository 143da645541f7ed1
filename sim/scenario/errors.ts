/**
 * The one error a scenario file can raise: every problem found, each with its place in the file
 * (`file:line:col`), the field path, the value and what was expected.
 */

import { formatFieldPath, issuesMessage } from '../../gate/index.js';

/** One problem in a scenario file. */
export interface ScenarioIssue {
  /** The file as named by the caller. */
  readonly file: string;
  /** 1-based line of the offending value (or key, for an unknown key). */
  readonly line: number;
  /** 1-based column. */
  readonly col: number;
  /** Dotted field path, e.g. `gate.rule.serviceArguments.fc_max_queue_depth`; empty for the file itself. */
  readonly path: string;
  /** The value as given (undefined when missing). */
  readonly value: unknown;
  /** What was expected, e.g. `an integer from 0 to 65536`. */
  readonly expected: string;
  /** The whole line: `file:line:col: path: detail`. */
  readonly message: string;
}

/** Most problems a ScenarioError lists; the rest are counted ("and N more"). */
export const MAX_LISTED_ISSUES = 20;

/** Stable code of scenario errors. */
export const SCENARIO_ERROR_CODE = 'SLUICE_E_SCENARIO';

/** A scenario file is invalid; `message` lists every issue, one per line. */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
  readonly code = SCENARIO_ERROR_CODE;
  /** The file as named by the caller. */
  readonly file: string;
  /** The problems, in file order: the first {@link MAX_LISTED_ISSUES}. */
  readonly issues: readonly ScenarioIssue[];

  /** Problems found beyond those listed (the list stops at {@link MAX_LISTED_ISSUES}). */
  readonly omitted: number;

  constructor(file: string, issues: readonly ScenarioIssue[], omitted = 0) {
    super(issuesMessage(file, issues, omitted));
    this.file = file;
    this.issues = issues;
    this.omitted = omitted;
  }
}

/** True when `err` is a ScenarioError (also across realms, by shape). */
export function isScenarioError(err: unknown): err is ScenarioError {
  return (
    err instanceof ScenarioError ||
    (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === SCENARIO_ERROR_CODE)
  );
}

/** `a.b[2].c` from path segments. */
export const formatPath = formatFieldPath;
