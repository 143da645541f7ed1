/**
 * Measurement helpers: quantiles and medians, a process's CPU time from
 * /proc, wrk (requests/s), free ports.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { place } from './ipc.js';

export function quantile(xs: ArrayLike<number>, q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = Float64Array.from(xs).sort();
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1));
  return s[i]!;
}

export function median(xs: number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of `pid` (all threads), or NaN. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields after the command: state is index 0, utime is field 14 (index 11), stime 15 (index 12)
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** pid -> [ppid, CPU seconds] of every process (empty where /proc is missing). */
export function cpuSnapshot(): Map<number, [number, number]> {
  const m = new Map<number, [number, number]>();
  let names: string[] = [];
  try {
    names = readdirSync('/proc');
  } catch {
    return m;
  }
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      m.set(Number(n), [Number(f[1]), (Number(f[11]) + Number(f[12])) / CLK_TCK]);
    } catch {
      // the process ended meanwhile
    }
  }
  return m;
}

/**
 * CPU seconds used between two snapshots by processes outside the tree of
 * `root` (other workloads sharing the machine), or NaN without /proc.
 */
export function foreignCpu(
  a: Map<number, [number, number]>,
  b: Map<number, [number, number]>,
  root: number,
): number {
  if (b.size === 0) return Number.NaN;
  const mine = new Set<number>([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, [ppid]] of b) {
      if (!mine.has(pid) && mine.has(ppid)) {
        mine.add(pid);
        grew = true;
      }
    }
  }
  let sum = 0;
  for (const [pid, [, cpu]] of b) {
    if (mine.has(pid)) continue;
    sum += cpu - (a.get(pid)?.[1] ?? 0);
  }
  return sum;
}

/** CPU seconds used by each pid while `fn` runs, and by other workloads (`foreign`). */
export async function withCpu<T>(
  pids: Record<string, number>,
  fn: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number>; wallS: number }> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, cpuSeconds(p)]));
  const snap = cpuSnapshot();
  const t0 = performance.now();
  const result = await fn();
  const wallS = (performance.now() - t0) / 1000;
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, cpuSeconds(p) - before[k]!]));
  cpu.foreign = foreignCpu(snap, cpuSnapshot(), process.pid);
  return { result, cpu, wallS };
}

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** `wrk --version` first line, or null when it is not installed. */
export function wrkVersion(): string | null {
  try {
    // wrk prints its version with a usage text and exits 1
    execFileSync('wrk', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return 'wrk';
  } catch (e) {
    const out = String((e as { stdout?: string }).stdout ?? '');
    const first = out.split('\n')[0]?.trim();
    return first?.startsWith('wrk') ? first.replace(/\s*Copyright.*/, '') : null;
  }
}

export interface WrkResult {
  rps: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
  p50Ms: number;
  p99Ms: number;
}

function ms(v: string | undefined): number {
  if (!v) return Number.NaN;
  const m = /([\d.]+)(us|ms|s)/.exec(v);
  if (!m) return Number.NaN;
  const x = Number(m[1]);
  return m[2] === 'us' ? x / 1000 : m[2] === 's' ? x * 1000 : x;
}

/** Runs wrk (closed loop, keep-alive) with a POST body; pinned to `cpu` when given. */
export function runWrk(o: {
  dir: string;
  url: string;
  body: string;
  connections: number;
  seconds: number;
  cpu: number | null;
}): Promise<WrkResult> {
  const script = path.join(o.dir, 'post.lua');
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = '${o.body}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency', '-s', script, o.url];
  const [cmd, argv] = o.cpu === null ? ['wrk', args] : ['taskset', ['-c', String(o.cpu), 'wrk', ...args]];
  return new Promise((resolve, reject) => {
    // its own session, like the other children (see ipc.ts `place`)
    const child = spawn(cmd, argv as string[], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (child.pid !== undefined) place(child.pid, null);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), (o.seconds + 15) * 1000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`wrk exited ${code}\n${out}`));
        return;
      }
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? '0');
      const se = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      resolve({
        rps: num(/Requests\/sec:\s+([\d.]+)/),
        requests: num(/(\d+) requests in/),
        non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
        socketErrors: se ? se.slice(1).reduce((a, x) => a + Number(x), 0) : 0,
        p50Ms: ms(/\n\s+50%\s+(\S+)/.exec(out)?.[1]),
        p99Ms: ms(/\n\s+99%\s+(\S+)/.exec(out)?.[1]),
      });
    });
  });
}
