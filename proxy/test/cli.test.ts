/**
 * The command line: `sluice proxy --config FILE --admin HOST:PORT` starts
 * with the rules of a GET /all document (fc_effective ignored on input),
 * serves them, and stops on SIGTERM; a bad flag or config exits 2.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { admin, freePort, infer, rule, TestBackend, until } from './helpers.js';

const BIN = new URL('../../bin/sluice.js', import.meta.url).pathname;
let b1: TestBackend;
const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
});
afterAll(async () => {
  await b1.stop();
});

function run(args: string[]): { child: ChildProcess; out: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, 'proxy', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c) => {
    out += c;
  });
  child.stderr!.on('data', (c) => {
    out += c;
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, out: () => out, exit };
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
});
