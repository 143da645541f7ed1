/**
 * The last resort of `sluice proxy`: an error that escapes every exchange's
 * own catch (see `RequestHandler`) is logged as one JSON line and the
 * process keeps serving, instead of Node ending it and every request in
 * flight with it. Each exchange fails alone (500 `internal_error`, its unit
 * released) before it gets here, so what reaches this is outside any one
 * request.
 */

/** The part of `process` the guard listens on. */
export interface CrashSource {
  on(event: 'uncaughtException', listener: (err: Error) => void): unknown;
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
}

/** A log line for an escaped error (`kind`: the process event). */
export function crashLine(kind: 'uncaught_exception' | 'unhandled_rejection', err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  return `sluice proxy: ${JSON.stringify({ event: kind, error: `${e.name}: ${e.message}`, stack: e.stack ?? null })}`;
}

/**
 * Installs the guard on `source` (the process).
 * @param log writes one line (stderr in `sluice proxy`)
 * @param onCrash counts the escape (optional)
 */
export function installCrashGuard(
  source: CrashSource,
  log: (line: string) => void,
  onCrash?: () => void,
): void {
  const report = (kind: 'uncaught_exception' | 'unhandled_rejection', err: unknown): void => {
    try {
      onCrash?.();
      log(crashLine(kind, err));
    } catch {
      // Nothing more can be done: the guard itself must never throw.
    }
  };
  source.on('uncaughtException', (err) => report('uncaught_exception', err));
  source.on('unhandledRejection', (reason) => report('unhandled_rejection', reason));
}
