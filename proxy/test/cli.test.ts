/**
 * The command line: `sluice proxy --config FILE --admin HOST:PORT` starts
 * with the rules of a GET /all document (fc_effective ignored on input),
 * serves them, and stops on SIGTERM; a bad flag or config exits 2.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { proxyNodeFlags, SEMI_SPACE_MB } from '../../cli/proxy-node-flags.js';
import { signHs256 } from '../../loadgen/driver/jwt-sign.js';
import { rawRequest } from './abuse/raw.js';
import {
  admin,
  freePort,
  infer,
  type ProxyProcess,
  rule,
  spawnProxy,
  TestBackend,
  until,
} from './helpers.js';

const HAS_TASKSET = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
let b1: TestBackend;
const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
});
afterAll(async () => {
  await b1.stop();
});

/** Runs `sluice proxy args`, behind `prefix` (e.g. taskset) when given. */
function run(args: string[], env: NodeJS.ProcessEnv = process.env, prefix: string[] = []): ProxyProcess {
  return spawnProxy(args, { env, prefix });
}

describe('sluice proxy', () => {
  test('--config takes the GET /all shape; SIGTERM stops it', async () => {
    const adminPort = await freePort();
    const port = await freePort();
    const r = rule(port, { fc_mode: 'enforce', fc_max_outstanding: 2, fc_effective: { mode: 'enforce' } }, [
      b1,
    ]);
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify({ lbAttr: [r] }));
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'secret-token\n');
    const p = run(['--config', file, '--admin', `127.0.0.1:${adminPort}`, '--admin-token-file', tokenFile]);
    try {
      expect(await until(() => p.out().includes('management API'), 20_000)).toBe(true);
      const g = await admin(adminPort, 'GET', '/netlox/v1/config/loadbalancer/all', undefined, {
        token: 'secret-token',
      });
      const rules = (g.json as { lbAttr: { serviceArguments: Record<string, unknown> }[] }).lbAttr;
      expect(rules).toHaveLength(1);
      expect(rules[0]!.serviceArguments).toMatchObject({ port, fc_max_outstanding: 2 });
      expect((await infer(port, { hold: 1 })).status).toBe(200);
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exit).toBe(0);
  }, 30_000);

  test('--admin-host-name, --admin-max-json-depth and the JWT claim flags reach the proxy', async () => {
    const adminPort = await freePort();
    const port = await freePort();
    const file = join(dir, 'jwt-rules.json');
    writeFileSync(
      file,
      JSON.stringify({ lbAttr: [rule(port, { fc_mode: 'enforce' }, [b1], { api_key_auth: 'jwt' })] }),
    );
    const secretFile = join(dir, 'jwt-secret');
    writeFileSync(secretFile, 'cli-secret\n');
    const p = run([
      '--config',
      file,
      '--admin',
      `127.0.0.1:${adminPort}`,
      '--admin-host-name',
      'gw.example',
      '--admin-max-json-depth',
      '8',
      '--jwt-secret-file',
      secretFile,
      '--jwt-audience',
      'sluice',
      '--jwt-issuer',
      'https://idp.example',
      '--jwt-allow-no-exp',
    ]);
    try {
      expect(await until(() => p.out().includes('management API'), 20_000)).toBe(true);
      const get = (host: string) => rawRequest(adminPort, `GET /metrics HTTP/1.1\r\nHost: ${host}`);
      expect((await get(`gw.example:${adminPort}`)).status).toBe(200);
      expect((await get(`other.example:${adminPort}`)).status).toBe(403);
      const deep = await admin(adminPort, 'POST', '/netlox/v1/config/loadbalancer', undefined, {
        raw: `${'['.repeat(9)}${']'.repeat(9)}`,
      });
      expect((deep.json as { error: string }).error).toBe('SLUICE_E_JSON_DEPTH');
      const iss = 'https://idp.example';
      const call = (claims: Record<string, unknown>) =>
        infer(port, { hold: 1, headers: { authorization: `Bearer ${signHs256(claims, 'cli-secret')}` } });
      expect((await call({ sub: 't', aud: 'sluice', iss })).status).toBe(200);
      const wrongAud = await call({ sub: 't', aud: 'other', iss });
      expect(JSON.parse(wrongAud.body).error.message).toBe('invalid token (audience)');
      const wrongIss = await call({ sub: 't', aud: 'sluice', iss: 'x' });
      expect(JSON.parse(wrongIss.body).error.message).toBe('invalid token (issuer)');
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exit).toBe(0);
  }, 30_000);

  test('an invalid rule in --config exits 2 naming the field', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ lbAttr: [rule(await freePort(), { fc_max_outstanding: -1 }, [b1])] }),
    );
    const p = run(['--config', file, '--admin', `127.0.0.1:${await freePort()}`]);
    expect(await p.exit).toBe(2);
    expect(p.out()).toContain('lbAttr[0]');
    expect(p.out()).toContain('serviceArguments.fc_max_outstanding');
  }, 30_000);

  test('re-runs itself with the V8 flags it needs; the child stops when the parent is killed', async () => {
    const adminPort = await freePort();
    // Allowed one CPU (taskset), it picks the flags itself; without taskset they are asked for.
    const p = run(
      ['--admin', `127.0.0.1:${adminPort}`],
      { ...process.env, SLUICE_PROXY_NODE_FLAGS: HAS_TASKSET ? undefined : proxyNodeFlags(1).join(' ') },
      HAS_TASKSET ? ['taskset', '-c', '0'] : [],
    );
    let kid = 0;
    try {
      expect(await until(() => p.out().includes('management API'), 20_000)).toBe(true);
      kid = childrenOf(p.child.pid!)[0] ?? 0;
      expect(kid).toBeGreaterThan(0);
      const argv = readFileSync(`/proc/${kid}/cmdline`, 'utf8').split('\0');
      expect(argv).toContain(`--max-semi-space-size=${SEMI_SPACE_MB}`);
      expect(argv).toContain('--single-threaded-gc');
    } finally {
      p.child.kill('SIGKILL');
    }
    await p.exit;
    expect(await until(() => !alive(kid), 10_000)).toBe(true);
  }, 30_000);

  test('SLUICE_PROXY_NODE_FLAGS empty: runs in the same process', async () => {
    const p = run(['--admin', `127.0.0.1:${await freePort()}`], {
      ...process.env,
      SLUICE_PROXY_NODE_FLAGS: '',
    });
    try {
      expect(await until(() => p.out().includes('management API'), 20_000)).toBe(true);
      expect(childrenOf(p.child.pid!)).toEqual([]);
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exit).toBe(0);
  }, 30_000);
});

/** Pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
