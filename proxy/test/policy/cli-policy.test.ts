/** `sluice proxy --policy FILE --defer-db FILE`: what a bad flag value is told, as a real process. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { freePort, spawnProxy } from '../helpers.js';
import { PROXY_TEST_POLICY } from './policy-helpers.js';

describe('sluice proxy --policy / --defer-db validation', () => {
  it('exits 2 with a message naming the file, the field and the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-cli-'));
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, PROXY_TEST_POLICY);
    const badPolicy = join(dir, 'bad.yaml');
    writeFileSync(badPolicy, PROXY_TEST_POLICY.replace('max_count: 2', 'max_count: -2'));
    const other = join(dir, 'other.db');
    const o = new Database(other);
    o.exec('CREATE TABLE accounts (id INTEGER)');
    o.close();
    const env = { ...process.env, SLUICE_PROXY_NODE_FLAGS: '' };
    const cases: [string[], string][] = [
      [
        ['--policy', policy, '--defer-db', join(dir, 'no', 'such', 'dir', 'd.db')],
        `--defer-db ${join(dir, 'no', 'such', 'dir', 'd.db')}: directory ${join(dir, 'no', 'such', 'dir')} does not exist`,
      ],
      [
        ['--policy', policy, '--defer-db', other],
        `--defer-db ${other}: is a SQLite database of another application (application_id 0, tables accounts)`,
      ],
      [
        ['--policy', policy],
        `--policy ${policy}: class batch defers (defer.enabled) but no --defer-db FILE is given`,
      ],
      [
        ['--policy', badPolicy, '--defer-db', join(dir, 'd.db')],
        `${badPolicy}:9:25: classes.interactive.queue.max_count: -2 is below the minimum 0`,
      ],
      [['--defer-db', join(dir, 'd.db')], '--defer-db needs --policy FILE'],
      [
        ['--policy', policy, '--defer-db', join(dir, 'd2.db'), '--defer-db-sync', 'sometimes'],
        '--defer-db-sync: "sometimes" is not one of full, normal',
      ],
    ];
    const runs = await Promise.all(
      cases.map(async ([args]) => {
        const p = spawnProxy(['--admin', `127.0.0.1:${await freePort()}`, ...args], { env });
        const code = await p.exit;
        return { code, err: p.err() };
      }),
    );
    for (const [i, r] of runs.entries()) {
      expect(r.code, cases[i]![1]).toBe(2);
      expect(r.err).toContain(cases[i]![1]);
    }
  }, 150_000);
});
