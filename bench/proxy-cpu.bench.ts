/**
 * `npm run bench:proxy-cpu -- --base DIR [--json]`: the proxy's CPU µs per request, this checkout
 * against another one (e.g. a worktree of the previous commit), side by side in one run.
 *
 * Each checkout's `LoxiProxy` runs in a child process of its own with one enforcing rule
 * (ceiling 256) in front of a backend in this process that answers a short JSON body at once;
 * this process sends REQUESTS non-streaming requests over CONNECTIONS keep-alive connections
 * and reads the child's own CPU time (user + system) for the run. Runs alternate base, this,
 * base, this, ... ROUNDS times, and the figure is the median per side; the ratio is this / base.
 * The CPU time per request does not depend on who saturates first, so the load generator
 * sharing the machine moves it little. Target (issue 16): within 10% of the base.
 * Verdict `met` / `missed` (exit 1) / `unresolved` (exit 3) when the base's own rounds spread
 * more than the 10% margin. `BENCH_PROXY_CPU_PROF=DIR` writes a V8 CPU profile of each child.
 */
import { type ChildProcess, fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { median } from './proxy/measure.js';

const REQUESTS = Number(process.env.BENCH_PROXY_CPU_REQUESTS ?? 20_000);
const CONNECTIONS = 32;
const ROUNDS = Number(process.env.BENCH_PROXY_CPU_ROUNDS ?? 5);
const MARGIN = 0.1;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

function once<T>(child: ChildProcess, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: { kind: string } & T) => {
      if (m.kind !== kind) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    child.once('exit', (code) => reject(new Error(`proxy child exited ${code}`)));
  });
}

async function drive(port: number, n: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (sent < n) {
      sent++;
      await new Promise<void>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/chat/completions',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
            res.resume();
            res.on('end', () => resolve());
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  agent.destroy();
}

async function oneRun(dir: string, backendPort: number): Promise<number> {
  const port = await freePort();
  const child = fork(
    path.join(import.meta.dirname, 'proxy-cpu', 'child.ts'),
    [dir, String(backendPort), String(port)],
    {
      execArgv: [
        '--import',
        'tsx',
        ...(process.env.BENCH_PROXY_CPU_PROF
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROXY_CPU_PROF}`]
          : []),
      ],
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  try {
    await once(child, 'ready');
    await drive(port, 2_000); // warm-up: JIT and pooled connections
    child.send({ kind: 'start' });
    await once(child, 'started');
    await drive(port, REQUESTS);
    child.send({ kind: 'stop' });
    const { us } = await once<{ us: number }>(child, 'cpu');
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.send({ kind: 'exit' });
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    return us / REQUESTS;
  } finally {
    child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const base = arg('--base');
  if (!base) {
    process.stderr.write('usage: npm run bench:proxy-cpu -- --base DIR [--json]\n');
    process.exitCode = 2;
    return;
  }
  const here = path.resolve(import.meta.dirname, '..');
  const backend = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const backendPort = (backend.address() as AddressInfo).port;
  const baseUs: number[] = [];
  const hereUs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    baseUs.push(await oneRun(path.resolve(base), backendPort));
    hereUs.push(await oneRun(here, backendPort));
  }
  backend.closeAllConnections();
  backend.close();
  const b = median(baseUs);
  const h = median(hereUs);
  const ratio = h / b;
  const spread = (Math.max(...baseUs) - Math.min(...baseUs)) / b;
  // With fewer than 3 rounds the spread of the base says nothing: nothing is judged a miss.
  const verdict = ratio <= 1 + MARGIN ? 'met' : spread > MARGIN || ROUNDS < 3 ? 'unresolved' : 'missed';
  const r2 = (x: number) => Math.round(x * 100) / 100;
  const result = {
    requests: REQUESTS,
    rounds: ROUNDS,
    base_cpu_us_per_request: baseUs.map(r2),
    this_cpu_us_per_request: hereUs.map(r2),
    median_base: r2(b),
    median_this: r2(h),
    ratio: Math.round(ratio * 1000) / 1000,
    base_spread: Math.round(spread * 1000) / 1000,
    verdict,
  };
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
  else
    process.stdout.write(
      [
        `proxy CPU per request (${REQUESTS} requests x ${ROUNDS} rounds, ${CONNECTIONS} keep-alive connections)`,
        `  base  ${result.base_cpu_us_per_request.join('  ')}  median ${result.median_base} µs`,
        `  this  ${result.this_cpu_us_per_request.join('  ')}  median ${result.median_this} µs`,
        `  ratio this/base ${result.ratio} (target <= ${1 + MARGIN}); base spread ${result.base_spread}`,
        `  verdict: ${verdict}`,
        '',
      ].join('\n'),
    );
  process.exitCode = verdict === 'met' ? 0 : verdict === 'missed' ? 1 : 3;
}

await main();
