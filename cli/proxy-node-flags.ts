/**
 * The V8 flags `sluice proxy` runs with, and the re-exec that applies them.
 * They size the heap and pick the GC threads, which V8 fixes when the
 * process starts, so a process started without them runs the proxy in a
 * child started with them (stdio shared, signals passed on, the child's exit
 * status returned; the child stops when its parent goes away).
 *
 * Why (BENCHMARKS.md, `bench:proxy`): on a process allowed one CPU, V8's
 * GC helper threads only take that CPU from the event loop, and the
 * proxy's pauses are scavenges whose length grows with the young
 * generation (every stream's objects survive one).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';

/** Marks the re-executed child, which runs the proxy itself. */
export const REEXEC_ENV = 'SLUICE_PROXY_REEXEC';
/** Overrides the flags: space-separated node flags, empty for none (no re-exec). */
export const FLAGS_ENV = 'SLUICE_PROXY_NODE_FLAGS';

/** Largest semi-space of the young generation on one CPU, MB (V8's default on 64-bit: 16). */
export const SEMI_SPACE_MB = 1;

/**
 * The flags for a process allowed `cpus` CPUs (`os.availableParallelism()`,
 * which reflects the affinity mask). On one CPU: `--single-threaded-gc` (the
 * GC helper threads would only take the event loop's CPU) and a small young
 * generation (short scavenges). With more CPUs none: that case was not
 * measured.
 */
export function proxyNodeFlags(cpus: number): string[] {
  return cpus <= 1 ? ['--single-threaded-gc', `--max-semi-space-size=${SEMI_SPACE_MB}`] : [];
}

/** Node flags written as one space-separated string (an environment variable), empty for none. */
export function parseNodeFlags(value: string): string[] {
  return value.split(/\s+/).filter((f) => f !== '');
}

/** The flags of `wanted` that the process was not started with (argv or NODE_OPTIONS). */
export function missingFlags(
  wanted: string[],
  execArgv: string[],
  nodeOptions: string | undefined,
): string[] {
  const have = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(normalize));
  return wanted.filter((f) => !have.has(normalize(f)));
}

/** V8 accepts `_` and `-` alike in flag names. */
function normalize(flag: string): string {
  const eq = flag.indexOf('=');
  return eq < 0 ? flag.replaceAll('_', '-') : flag.slice(0, eq).replaceAll('_', '-') + flag.slice(eq);
}

/**
 * Re-runs this command in a child with the proxy's flags, unless this is
 * that child, there are none (more than one CPU), they are already in
 * force, or `SLUICE_PROXY_NODE_FLAGS` is empty.
 * @returns the child's exit promise (resolves to the exit code), or null when
 *   this process should run the proxy itself
 */
export function reexecWithProxyFlags(env: NodeJS.ProcessEnv = process.env): Promise<number> | null {
  if (env[REEXEC_ENV] === '1') return null;
  const override = env[FLAGS_ENV];
  const wanted =
    override === undefined ? proxyNodeFlags(os.availableParallelism()) : parseNodeFlags(override);
  const missing = missingFlags(wanted, process.execArgv, env.NODE_OPTIONS);
  if (missing.length === 0) return null;
  const child = spawn(process.execPath, [...process.execArgv, ...missing, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...env, [REEXEC_ENV]: '1' },
  });
  return relay(child);
}

/** Passes SIGINT/SIGTERM/SIGHUP to `child` and resolves with its exit code (128 + signal number when killed). */
function relay(child: ChildProcess): Promise<number> {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const pass = (s: NodeJS.Signals): void => {
    child.kill(s);
  };
  for (const s of signals) process.on(s, pass);
  return new Promise((resolve) => {
    child.on('error', (err) => {
      process.stderr.write(`sluice proxy: cannot start the proxy process: ${err.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, sig) => {
      for (const s of signals) process.off(s, pass);
      resolve(code ?? 128 + (sig ? (os.constants.signals[sig] ?? 0) : 0));
    });
  });
}

/** In the re-executed child: stops through `shutdown` when the parent goes away (its IPC channel closes). */
export function followParent(shutdown: () => void): void {
  if (process.env[REEXEC_ENV] !== '1' || process.send === undefined) return;
  process.on('disconnect', shutdown);
  // The channel must not keep the child alive by itself, nor be read.
  process.channel?.unref();
}
