/**
 * The reference line of a cliff test: HAProxy 2.6 (Debian package `haproxy`) in front of the same
 * emulated engines, with the nearest equivalent of the gate's rule, written by
 * `haproxy-config.ts`: `maxconn` per server = the endpoint ceiling (fc_ep_max_inflight, else the
 * service ceiling shared over the servers), the 429 queue bound = fc_max_queue_depth,
 * `timeout queue` = fc_max_queue_wait_ms.
 *
 * Refusal bodies use the gate's error words (`admission_capacity`, `admission_queue_timeout`) so
 * the driver classifies them as it does the gate's (shed, timed out). Nothing here installs
 * HAProxy: {@link findHaproxy} says whether it is there.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyConfigText } from './haproxy-config.js';

/** The gate settings HAProxy approximates. */
export interface HaproxyRule {
  /** Engine ports on 127.0.0.1. */
  servers: number[];
  /** In-flight requests per server (`maxconn`); 0 = no limit. */
  maxconnPerServer: number;
  /** Queue bound (429 at or above it); 0 = no queue (429 when every server is full). */
  queueDepth: number;
  /** Queue wait before 503, real ms. */
  queueWaitMs: number;
  /** Listen port on 127.0.0.1. */
  port: number;
}

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

/** The configuration text for `rule` (`haproxy-config.ts`). */
export function haproxyConfig(rule: HaproxyRule): string {
  return haproxyConfigText({
    port: rule.port,
    servers: rule.servers,
    serverName: (i) => `e${i}`,
    maxconnPerServer: rule.maxconnPerServer,
    queueDepth: rule.queueDepth,
    queueWaitMs: Math.max(1, Math.round(rule.queueWaitMs)),
    maxconn: 4096,
    keepAliveS: 30,
    httpReuse: 'safe',
    queueFull: { error: 'admission_capacity', retryAfterS: 1 },
    queueTimeout: { error: 'admission_queue_timeout', retryAfterS: 1 },
  });
}

/** A running HAProxy. */
export interface RunningHaproxy {
  target: string;
  config: string;
  close(): Promise<void>;
}

/** Waits until 127.0.0.1:`port` accepts connections (or `timeoutMs` passes). */
async function waitListening(port: number, timeoutMs: number, proc: ChildProcess): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited with code ${proc.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`haproxy did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

/** Starts HAProxy in the foreground (`-db`) with the generated configuration. */
export async function startHaproxy(bin: string, rule: HaproxyRule): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-'));
  const config = haproxyConfig(rule);
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const check = spawnSync(bin, ['-c', '-f', file], { encoding: 'utf8', timeout: 10_000 });
  if (check.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`haproxy refused the generated config: ${check.stdout}${check.stderr}`);
  }
  const proc = spawn(bin, ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (b: Buffer) => {
    if (stderr.length < 4000) stderr += b.toString();
  });
  try {
    await waitListening(rule.port, 5000, proc);
  } catch (err) {
    proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}${stderr ? `: ${stderr.trim()}` : ''}`);
  }
  let closing: Promise<void> | null = null;
  return {
    target: `http://127.0.0.1:${rule.port}`,
    config,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (proc.exitCode !== null) return done();
        const kill = setTimeout(() => proc.kill('SIGKILL'), 3000);
        proc.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        proc.kill('SIGTERM');
      });
      return closing;
    },
  };
}
