import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeferredItem } from '../../gate/index.js';
import {
  DEFER_DB_ERROR_CODE,
  DeferDbError,
  MAX_RESULT_BODY_BYTES,
  SqliteDeferStore,
} from './defer-sqlite.js';

const dir = (): string => mkdtempSync(join(tmpdir(), 'sluice-defer-'));
const open: SqliteDeferStore[] = [];
const openStore = (file: string, nowMs?: number): SqliteDeferStore => {
  const s = SqliteDeferStore.open(file, nowMs === undefined ? {} : { nowMs });
  open.push(s);
  return s;
};
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

const item = (id: string, o: Partial<DeferredItem> = {}): DeferredItem => ({
  id,
  className: 'batch',
  tenant: 'acme',
  deferredAtMs: 1000,
  deadlineMs: 61_000,
  seats: 3,
  idempotencyKey: `k-${id}`,
  payload: new TextEncoder().encode(`{"id":"${id}"}`),
  ...o,
});

function refusal(f: () => unknown): DeferDbError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DeferDbError);
    expect((e as DeferDbError).code).toBe(DEFER_DB_ERROR_CODE);
    return e as DeferDbError;
  }
  throw new Error('expected a DeferDbError');
}

describe('SqliteDeferStore transitions', () => {
  it('stores an item durably with every field, pending, oldest first per class', () => {
    const s = openStore(join(dir(), 'd.db'));
    s.add(item('a'));
    s.add(item('b', { className: 'eval' }));
    s.add(item('c'));
    expect(s.pending('batch', 10).map((i) => i.id)).toEqual(['a', 'c']);
    expect(s.pending('batch', 1).map((i) => i.id)).toEqual(['a']);
    expect(s.pending('batch', 0)).toEqual([]);
    expect(Object.fromEntries(s.backlog())).toEqual({ batch: 2, eval: 1 });
    const r = s.get('a')!;
    expect(r.state).toBe('pending');
    expect(r.updatedAtMs).toBe(1000);
    expect(r.resultStatus).toBeUndefined();
    expect(r.item).toEqual(item('a'));
    expect(new TextDecoder().decode(r.item.payload)).toBe('{"id":"a"}');
    expect(s.get('nope')).toBeUndefined();
  });

  it('keeps an item without idempotency key without one', () => {
    const s = openStore(join(dir(), 'd.db'));
    const { idempotencyKey: _k, ...bare } = item('x');
    s.add(bare);
    expect(s.get('x')!.item.idempotencyKey).toBeUndefined();
  });

  it('refuses a duplicate id, a non URL-safe id and fractional seats, changing nothing', () => {
    const s = openStore(join(dir(), 'd.db'));
    s.add(item('a'));
    expect(() => s.add(item('a', { tenant: 'other' }))).toThrow('defer id a exists');
    expect(s.get('a')!.item.tenant).toBe('acme');
    expect(() => s.add(item('../etc'))).toThrow(/not 1 to 128 characters/);
    expect(() => s.add(item(''))).toThrow(/not 1 to 128 characters/);
    expect(() => s.add(item('x'.repeat(129)))).toThrow(/not 1 to 128 characters/);
    expect(() => s.add(item('f', { seats: 1.5 }))).toThrow(/seats 1.5/);
    expect(Object.fromEntries(s.backlog())).toEqual({ batch: 1 });
  });

  it('claims only a pending item, once', () => {
    const s = openStore(join(dir(), 'd.db'));
    s.add(item('a'));
    expect(s.claim('a', 2000)).toBe(true);
    expect(s.claim('a', 2001)).toBe(false);
    expect(s.claim('unknown', 2001)).toBe(false);
    expect(s.get('a')).toMatchObject({ state: 'draining', updatedAtMs: 2000 });
    expect(s.pending('batch', 10)).toEqual([]);
    expect(s.backlog().size).toBe(0);
  });

  it.each(['done', 'expired', 'cancelled'] as const)(
    'finishes draining and pending items as %s, once',
    (st) => {
      const s = openStore(join(dir(), 'd.db'));
      s.add(item('a'));
      s.add(item('b'));
      s.claim('a', 2000);
      expect(s.finish('a', st, 3000, 201)).toBe(true);
      expect(s.finish('b', st, 3000)).toBe(true);
      for (const again of ['done', 'expired', 'cancelled'] as const)
        expect(s.finish('a', again, 4000)).toBe(false);
      expect(s.claim('a', 4000)).toBe(false);
      expect(s.get('a')).toMatchObject({ state: st, resultStatus: 201, updatedAtMs: 3000 });
      expect(s.get('b')!.resultStatus).toBeUndefined();
      expect(s.finish('unknown', st, 3000)).toBe(false);
    },
  );

  it('keeps a bounded result body and only the status of a longer one', () => {
    const s = openStore(join(dir(), 'd.db'));
    s.add(item('a'));
    s.add(item('b'));
    const body = new TextEncoder().encode('{"ok":true}');
    s.finishWithResult('a', 'done', 3000, { status: 200, body, contentType: 'application/json' });
    s.finishWithResult('b', 'done', 3000, { status: 200, body: new Uint8Array(MAX_RESULT_BODY_BYTES + 1) });
    expect(s.result('a')).toEqual({ status: 200, body, contentType: 'application/json' });
    expect(s.result('b')).toEqual({ status: 200 });
    expect(s.result('zz')).toBeUndefined();
  });

  it('refuses, in SQL, any backward move even by a writer that skips this class', () => {
    const file = join(dir(), 'd.db');
    const s = openStore(file);
    s.add(item('a'));
    s.finish('a', 'done', 3000, 200);
    s.close();
    const raw = new Database(file);
    expect(() => raw.prepare(`UPDATE items SET state = 'pending' WHERE id = 'a'`).run()).toThrow(
      /state may not move from done to pending/,
    );
    expect(() =>
      raw
        .prepare(
          `INSERT INTO items (id, class, tenant, deferred_at_ms, deadline_ms, seats, payload, state, updated_at_ms) VALUES ('z','batch','t',1,2,1,x'00','done',1)`,
        )
        .run(),
    ).toThrow(/a new item is pending/);
    raw.close();
  });

  it('prunes only finished items older than the bound', () => {
    const s = openStore(join(dir(), 'd.db'));
    for (const id of ['a', 'b', 'c']) s.add(item(id));
    s.finish('a', 'done', 3000);
    s.finish('b', 'expired', 9000);
    expect(s.prune(5000)).toBe(1);
    expect(s.get('a')).toBeUndefined();
    expect(s.get('b')!.state).toBe('expired');
    expect(s.get('c')!.state).toBe('pending');
  });
});

describe('SqliteDeferStore reopen', () => {
  it('keeps everything across a close and turns draining items back into pending, in their order', () => {
    const file = join(dir(), 'd.db');
    const s = openStore(file);
    for (const id of ['a', 'b', 'c', 'd']) s.add(item(id));
    s.claim('a', 2000);
    s.claim('c', 2000);
    s.finish('d', 'done', 2500, 200);
    s.close();
    const r = openStore(file, 9000);
    expect(r.recovered).toBe(2);
    expect(r.pending('batch', 10).map((i) => i.id)).toEqual(['a', 'b', 'c']);
    expect(r.get('a')).toMatchObject({ state: 'pending', updatedAtMs: 9000 });
    expect(r.get('d')).toMatchObject({ state: 'done', resultStatus: 200 });
    expect(r.claim('a', 9001)).toBe(true);
  });

  it('is WAL, synchronous FULL, versioned and tagged', () => {
    const file = join(dir(), 'd.db');
    openStore(file).close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(1);
    expect(raw.pragma('application_id', { simple: true })).toBe(0x534c4446);
    raw.close();
  });
});

describe('--defer-db validation', () => {
  it('names a missing directory', () => {
    expect(refusal(() => SqliteDeferStore.open('/nonexistent-sluice/dir/d.db')).message).toBe(
      '--defer-db /nonexistent-sluice/dir/d.db: directory /nonexistent-sluice/dir does not exist',
    );
  });

  it('names a directory given as the file, and a device', () => {
    const d = dir();
    expect(refusal(() => SqliteDeferStore.open(d)).message).toBe(
      `--defer-db ${d}: is a directory, not a database file`,
    );
    expect(refusal(() => SqliteDeferStore.open('/dev/null')).message).toBe(
      '--defer-db /dev/null: is not a regular file',
    );
  });

  it('names a file that cannot be written (even as root: a read-only proc file)', () => {
    expect(refusal(() => SqliteDeferStore.open('/proc/version')).message).toMatch(
      /^--defer-db \/proc\/version: cannot be opened for reading and writing/,
    );
  });

  it('names a file that is not SQLite and leaves it unchanged', () => {
    const f = join(dir(), 'notes.txt');
    const text = 'not a database\n'.repeat(40);
    writeFileSync(f, text);
    expect(refusal(() => SqliteDeferStore.open(f)).message).toBe(`--defer-db ${f}: is not a SQLite database`);
  });

  it("names another application's SQLite database and does not touch it", () => {
    const f = join(dir(), 'other.db');
    const o = new Database(f);
    o.exec('CREATE TABLE orders (id INTEGER)');
    o.close();
    expect(refusal(() => SqliteDeferStore.open(f)).message).toBe(
      `--defer-db ${f}: is a SQLite database of another application (application_id 0, tables orders), not a Sluice defer database`,
    );
    const again = new Database(f, { readonly: true });
    expect(again.prepare(`SELECT name FROM sqlite_schema WHERE type='table'`).all()).toEqual([
      { name: 'orders' },
    ]);
    again.close();
  });

  it('names a newer schema version', () => {
    const f = join(dir(), 'd.db');
    openStore(f).close();
    const raw = new Database(f);
    raw.pragma('user_version = 2');
    raw.close();
    expect(refusal(() => SqliteDeferStore.open(f)).message).toBe(
      `--defer-db ${f}: has defer schema version 2; this Sluice reads version 1`,
    );
  });

  it('refuses a second opener while the first holds the file, and lets it in after close', () => {
    const f = join(dir(), 'd.db');
    const s = openStore(f);
    s.add(item('a'));
    expect(refusal(() => SqliteDeferStore.open(f)).message).toMatch(/is in use by another process/);
    s.close();
    expect(openStore(f).get('a')!.state).toBe('pending');
  });
});
