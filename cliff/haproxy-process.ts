/**
 * HAProxy as a child process, for the cliff's reference line and the proxy benchmark: finding the
 * binary, and starting it in the foreground (`-db`) with a configuration (checked with `-c`
 * first) until its port accepts connections, then stopping it (SIGTERM, SIGKILL after
 * {@link STOP_GRACE_MS}). The configurations themselves come from `haproxy-config.ts`. Nothing
 * here installs HAProxy.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How long a stopped HAProxy has to exit after SIGTERM before SIGKILL, ms. */
export const STOP_GRACE_MS = 3000;
/** How long a started HAProxy has to accept connections on its port, ms. */
export const START_TIMEOUT_MS = 5000;

/** The haproxy binary's path and version line, or why it cannot be used. */
export function findHaproxy(): { ok: true; path: string; version: string } | { ok: false; why: string } {
  for (const path of ['haproxy', '/usr/sbin/haproxy']) {
    const r = spawnSync(path, ['-v'], { encoding: 'utf8', timeout: 5000 });
    if (r.status === 0) {
      const version = (r.stdout.split('\n')[0] ?? '').trim();
      return { ok: true, path, version };
    }
  }
  return {
    ok: false,
    why: 'haproxy is not installed (Debian: apt-get install -y haproxy); the HAProxy line is skipped',
  };
}

/** How to run it. */
export interface HaproxyProcessOptions {
  /** `-q`: no warnings on stderr. @default false */
  quiet?: boolean;
  /** Its own process group, out of reach of a signal to the caller's group. @default false */
  detached?: boolean;
  /** Called with its pid once spawned (e.g. to pin it to a CPU). */
  onSpawn?: (pid: number) => void;
}

/** A running HAProxy. */
export interface RunningHaproxy {
  /** `http://127.0.0.1:<port>`. */
  target: string;
  /** The configuration it runs. */
  config: string;
  /** Its pid (-1 if the spawn gave none). */
  pid: number;
  /** Stops it (SIGTERM, then SIGKILL after {@link STOP_GRACE_MS}) and removes its directory; idempotent. */
  close(): Promise<void>;
  /** SIGKILL at once, synchronously (a safety net for an exiting process). */
  kill(): void;
}

/** Resolves true when 127.0.0.1:`port` accepts a connection (closed at once), false when refused. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Waits until 127.0.0.1:`port` accepts connections (or `timeoutMs` passes, or it exits). */
async function waitListening(port: number, timeoutMs: number, proc: ChildProcess): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited with code ${proc.exitCode}`);
    if (await acceptsConnections(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`haproxy did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

/**
 * Starts `bin` in the foreground with `config` (written to a temporary directory, removed on
 * close) and resolves once 127.0.0.1:`port`, the port the configuration binds, accepts
 * connections.
 * @throws Error when HAProxy refuses the configuration, exits, or does not listen within
 *   {@link START_TIMEOUT_MS} (with what it wrote on stderr); nothing is left running.
 */
export async function startHaproxy(
  bin: string,
  config: string,
  port: number,
  opts: HaproxyProcessOptions = {},
): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const q = opts.quiet ? ['-q'] : [];
  const check = spawnSync(bin, ['-c', ...q, '-f', file], { encoding: 'utf8', timeout: 10_000 });
  if (check.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`haproxy refused the generated config: ${check.stdout}${check.stderr}`);
  }
  const proc = spawn(bin, ['-db', ...q, '-f', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: opts.detached ?? false,
  });
  let stderr = '';
  proc.stderr?.on('data', (b: Buffer) => {
    if (stderr.length < 4000) stderr += b.toString();
  });
  if (proc.pid !== undefined) opts.onSpawn?.(proc.pid);
  let closing: Promise<void> | null = null;
  const running: RunningHaproxy = {
    target: `http://127.0.0.1:${port}`,
    config,
    pid: proc.pid ?? -1,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (proc.exitCode !== null || proc.signalCode !== null) return done();
        const kill = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
        proc.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        proc.kill('SIGTERM');
      });
      return closing;
    },
    kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
  try {
    await waitListening(port, START_TIMEOUT_MS, proc);
  } catch (err) {
    await running.close();
    throw new Error(`${(err as Error).message}${stderr ? `: ${stderr.trim()}` : ''}`);
  }
  return running;
}
