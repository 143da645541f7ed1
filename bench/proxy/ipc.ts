/**
 * A tiny request/answer protocol over Node's child-process IPC channel, and
 * the spawning of the benchmark's children (pinned to a CPU when asked).
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Call {
  id: number;
  cmd: string;
  args: unknown;
}

interface Answer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export type Handlers = Record<string, (args: never) => unknown>;

/** Child side: answers calls with `handlers[cmd](args)`; exits when the parent goes away. */
export function serve(handlers: Handlers): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('this module runs as a child of bench/proxy.bench.ts');
  process.on('disconnect', () => process.exit(0));
  // exit normally on SIGTERM so --cpu-prof profiles get written
  process.on('SIGTERM', () => process.exit(0));
  process.on('message', (m: Call) => {
    const h = handlers[m.cmd] as ((a: unknown) => unknown) | undefined;
    Promise.resolve()
      .then(() => {
        if (!h) throw new Error(`unknown command ${m.cmd}`);
        return h(m.args);
      })
      .then(
        (result) => send({ id: m.id, ok: true, result } satisfies Answer),
        (err: unknown) =>
          send({
            id: m.id,
            ok: false,
            error: err instanceof Error ? err.stack : String(err),
          } satisfies Answer),
      );
  });
  send({ id: 0, ok: true, result: 'ready' } satisfies Answer);
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The repository root (children run from it so `--import tsx` resolves). */
export const ROOT = path.resolve(HERE, '..', '..');

/** Pins every thread of `pid` to `cpu`; false when taskset is missing or fails. */
export function pin(pid: number, cpu: number | null): boolean {
  if (cpu === null) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Priority of the benchmark's processes. Children are started in their own
 * session (`detached`), so where the kernel groups CFS scheduling by session
 * (autogroup) each child is its own group, and `raise` gives that group the
 * nice value: a plain nice only ranks a process within its group.
 */
export const priority: { nice: number | null; autogroup: boolean } = { nice: null, autogroup: false };

/** Pins `pid` to `cpu` and gives its session group the benchmark's nice value (when allowed). */
export function place(pid: number, cpu: number | null): void {
  pin(pid, cpu);
  if (priority.nice === null) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(priority.nice));
    priority.autogroup = true;
  } catch {
    // no autogroup, or not allowed: the inherited nice value still applies
  }
}

/** A child process running one of bench/proxy/*-child.ts. */
export class Child {
  readonly proc: ChildProcess;
  #next = 1;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly ready: Promise<void>;
  #exited = false;

  constructor(
    readonly name: string,
    file: string,
    opts: { cpu: number | null; nodeFlags?: string[]; argv?: string[]; stdoutFile?: string },
  ) {
    this.proc = fork(path.join(HERE, file), opts.argv ?? [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx', ...(opts.nodeFlags ?? [])],
      // stdout is dropped, or appended to `stdoutFile` (e.g. the lines of --trace-gc)
      stdio: ['ignore', opts.stdoutFile ? openSync(opts.stdoutFile, 'a') : 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      detached: true,
    });
    if (this.proc.pid !== undefined) place(this.proc.pid, opts.cpu);
    let onReady: () => void = () => {};
    let onFail: (e: Error) => void = () => {};
    this.ready = new Promise<void>((res, rej) => {
      onReady = res;
      onFail = rej;
    });
    this.proc.on('message', (m: Answer) => {
      if (m.id === 0) {
        onReady();
        return;
      }
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(`${this.name}: ${m.error}`));
    });
    this.proc.on('exit', (code, sig) => {
      this.#exited = true;
      const e = new Error(`${this.name} exited (${code ?? sig})`);
      onFail(e);
      for (const p of this.#pending.values()) p.reject(e);
      this.#pending.clear();
    });
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  call<T>(cmd: string, args: unknown = null): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.proc.send({ id, cmd, args } satisfies Call);
    });
  }

  /** Kills the child (SIGTERM, then SIGKILL after 2 s) and waits for its exit. */
  async kill(): Promise<void> {
    if (this.#exited) return;
    const gone = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 2_000);
    await gone;
    clearTimeout(t);
  }
}
