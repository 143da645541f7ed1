/**
 * The defer disposition's durable store for `sluice proxy --defer-db FILE`: the gate's
 * {@link DeferStore} port on SQLite (better-sqlite3, synchronous).
 *
 * Durability: WAL journal mode with `synchronous=FULL`, so every add, claim and finish is fsynced
 * to the write-ahead log before the call returns. `NORMAL` would survive a `kill -9` of the proxy
 * (the WAL is in the page cache) but may lose the last commits on power loss or an OS crash; the
 * 202 the proxy sends after `add` is a promise to run the request, and the defer path is not hot
 * (a drain of a few items per second), so the fsync per change is paid.
 *
 * Integrity: each transition is one `UPDATE … WHERE state IN (…)`; `claim` only moves a row that
 * is still `pending`, so two claims of one item cannot both succeed. A trigger refuses any change
 * of a finished row (done, expired, cancelled) and any transition the port does not allow, so even
 * a bug in this file cannot move an item backwards. Opening a store turns every `draining` row back
 * into `pending` (the one backward step, at-least-once feed-back after a crash).
 *
 * Exclusive locking: the file is locked while open (`locking_mode=EXCLUSIVE`), so a second proxy on
 * the same file is refused instead of draining the same items; the OS drops the lock when the
 * process dies, `kill -9` included.
 */
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { DeferRecord, DeferResult, DeferredItem, DeferState, DeferStore } from '../../gate/index.js';

/** The schema version this code reads and writes (`PRAGMA user_version`). */
export const DEFER_SCHEMA_VERSION = 1;
/** `PRAGMA application_id` of a Sluice defer database: "SLDF". */
export const DEFER_APPLICATION_ID = 0x534c4446;
/** Error code of a `--defer-db` file that cannot be used. */
export const DEFER_DB_ERROR_CODE = 'SLUICE_E_DEFER_DB';
/** Longest id the store accepts (characters of `[A-Za-z0-9_-]`). */
export const MAX_DEFER_ID = 128;
/** Largest result body kept for the status endpoint, bytes. */
export const MAX_RESULT_BODY_BYTES = 65536;

/** A defer database that cannot be opened or used, naming the file and why. */
export class DeferDbError extends Error {
  override readonly name = 'DeferDbError';
  readonly code = DEFER_DB_ERROR_CODE;
  readonly file: string;
  constructor(file: string, detail: string) {
    super(`--defer-db ${file}: ${detail}`);
    this.file = file;
  }
}

/** A finished item's stored result, for the status endpoint (the gate's shape). */
export type { DeferResult };

interface Row {
  id: string;
  class: string;
  tenant: string;
  deferred_at_ms: number;
  deadline_ms: number;
  seats: number;
  idem_key: string | null;
  payload: Buffer;
  state: DeferState;
  result_status: number | null;
  updated_at_ms: number;
}

const ID_RE = /^[A-Za-z0-9_-]+$/;
const TERMINAL = "('done','expired','cancelled')";

const SCHEMA = `
CREATE TABLE items (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  id             TEXT NOT NULL UNIQUE,
  class          TEXT NOT NULL,
  tenant         TEXT NOT NULL,
  deferred_at_ms REAL NOT NULL,
  deadline_ms    REAL NOT NULL,
  seats          INTEGER NOT NULL CHECK (seats >= 0),
  idem_key       TEXT,
  payload        BLOB NOT NULL,
  state          TEXT NOT NULL CHECK (state IN ('pending','draining','done','expired','cancelled')),
  result_status  INTEGER,
  result_body    BLOB,
  result_type    TEXT,
  updated_at_ms  REAL NOT NULL
);
CREATE INDEX items_backlog ON items (class, state, seq);
CREATE INDEX items_finished ON items (state, updated_at_ms);
CREATE TRIGGER items_forward BEFORE UPDATE OF state ON items
WHEN NOT (
  (OLD.state = 'pending'  AND NEW.state IN ('draining','done','expired','cancelled')) OR
  (OLD.state = 'draining' AND NEW.state IN ('pending','done','expired','cancelled'))
)
BEGIN SELECT RAISE(ABORT, 'sluice defer: state may not move from ' || OLD.state || ' to ' || NEW.state); END;
CREATE TRIGGER items_insert_pending BEFORE INSERT ON items WHEN NEW.state <> 'pending'
BEGIN SELECT RAISE(ABORT, 'sluice defer: a new item is pending'); END;
`;

/** Options of {@link SqliteDeferStore.open}. */
export interface SqliteDeferOptions {
  /** ms for the reopen's `updated_at_ms` of recovered rows (default Date.now()). */
  readonly nowMs?: number;
  /** `synchronous` setting; FULL (the default, see the file's doc) or NORMAL, for the benchmark's comparison only. */
  readonly synchronous?: 'FULL' | 'NORMAL';
}

/** The SQLite {@link DeferStore}. Not for sharing between processes (the file is locked). */
export class SqliteDeferStore implements DeferStore {
  readonly file: string;
  /** Items found `draining` at open and turned back into `pending`. */
  readonly recovered: number;
  readonly #db: Database.Database;
  readonly #add: Database.Statement;
  readonly #pending: Database.Statement;
  readonly #claim: Database.Statement;
  readonly #finish: Database.Statement;
  readonly #get: Database.Statement;
  readonly #result: Database.Statement;
  readonly #backlog: Database.Statement;
  readonly #prune: Database.Statement;
  #closed = false;

  private constructor(file: string, db: Database.Database, recovered: number) {
    this.file = file;
    this.#db = db;
    this.recovered = recovered;
    this.#add = db.prepare(
      `INSERT INTO items (id, class, tenant, deferred_at_ms, deadline_ms, seats, idem_key, payload, state, updated_at_ms)
       VALUES (@id, @class, @tenant, @deferredAtMs, @deadlineMs, @seats, @idemKey, @payload, 'pending', @deferredAtMs)`,
    );
    this.#pending = db.prepare(
      `SELECT * FROM items WHERE class = ? AND state = 'pending' ORDER BY seq LIMIT ?`,
    );
    this.#claim = db.prepare(
      `UPDATE items SET state = 'draining', updated_at_ms = ? WHERE id = ? AND state = 'pending'`,
    );
    this.#finish = db.prepare(
      `UPDATE items SET state = @state, updated_at_ms = @now, result_status = @status,
         result_body = @body, result_type = @type
       WHERE id = @id AND state IN ('pending','draining')`,
    );
    this.#get = db.prepare(`SELECT * FROM items WHERE id = ?`);
    this.#result = db.prepare(`SELECT result_status, result_body, result_type FROM items WHERE id = ?`);
    this.#backlog = db.prepare(
      `SELECT class, count(*) AS n FROM items WHERE state = 'pending' GROUP BY class ORDER BY class`,
    );
    this.#prune = db.prepare(
      `DELETE FROM items WHERE seq IN (SELECT seq FROM items WHERE state IN ${TERMINAL} AND updated_at_ms < ? ORDER BY seq LIMIT ?)`,
    );
  }

  /**
   * Opens (creating when missing) the defer database `file`, checks it is a Sluice defer database
   * of this schema version, and turns `draining` rows back into `pending`.
   * @throws DeferDbError naming the file and the problem (directory missing, not a file, not
   *   writable, not SQLite, another application's database, a newer schema, locked by another process)
   */
  static open(file: string, opts: SqliteDeferOptions = {}): SqliteDeferStore {
    const path = resolve(file);
    preflight(file, path);
    let db: Database.Database;
    try {
      db = new Database(path, { timeout: 0 });
    } catch (e) {
      throw new DeferDbError(file, usageMessage(e));
    }
    try {
      // Before the first access, so the lock (and WAL index in heap memory) is this process's.
      db.pragma('locking_mode = EXCLUSIVE');
      const mode = String(db.pragma('journal_mode = WAL', { simple: true }));
      if (mode.toLowerCase() !== 'wal')
        throw new DeferDbError(file, `WAL journal mode is not available (got ${mode})`);
      db.pragma(`synchronous = ${opts.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
      db.pragma('foreign_keys = ON');
      migrate(db, file);
      const now = opts.nowMs ?? Date.now();
      const recovered = db
        .prepare(`UPDATE items SET state = 'pending', updated_at_ms = ? WHERE state = 'draining'`)
        .run(now).changes;
      return new SqliteDeferStore(file, db, recovered);
    } catch (e) {
      db.close();
      if (e instanceof DeferDbError) throw e;
      throw new DeferDbError(file, usageMessage(e));
    }
  }

  add(item: DeferredItem): void {
    if (!ID_RE.test(item.id) || item.id.length > MAX_DEFER_ID)
      throw new RangeError(
        `defer id ${JSON.stringify(item.id.slice(0, 40))} is not 1 to ${MAX_DEFER_ID} characters of [A-Za-z0-9_-]`,
      );
    if (!Number.isInteger(item.seats) || item.seats < 0)
      throw new RangeError(`defer seats ${item.seats} is not a whole number >= 0`);
    try {
      this.#add.run({
        id: item.id,
        class: item.className,
        tenant: item.tenant,
        deferredAtMs: item.deferredAtMs,
        deadlineMs: item.deadlineMs,
        seats: item.seats,
        idemKey: item.idempotencyKey ?? null,
        payload: Buffer.from(item.payload.buffer, item.payload.byteOffset, item.payload.byteLength),
      });
    } catch (e) {
      if (isSqlite(e, 'SQLITE_CONSTRAINT_UNIQUE')) throw new RangeError(`defer id ${item.id} exists`);
      throw new DeferDbError(this.file, usageMessage(e));
    }
  }

  pending(className: string, limit: number): DeferredItem[] {
    const n = Math.max(0, Math.floor(limit));
    if (n === 0) return [];
    return (this.#pending.all(className, n) as Row[]).map(toItem);
  }

  claim(id: string, nowMs: number): boolean {
    return this.#write(() => this.#claim.run(nowMs, id).changes === 1);
  }

  finish(id: string, state: 'done' | 'expired' | 'cancelled', nowMs: number, resultStatus?: number): boolean {
    return this.finishWithResult(
      id,
      state,
      nowMs,
      resultStatus === undefined ? {} : { status: resultStatus },
    );
  }

  /**
   * {@link finish} keeping the backend's answer for the status endpoint: its status, and its body
   * when at most {@link MAX_RESULT_BODY_BYTES} (a longer body is not kept; the status is).
   */
  finishWithResult(
    id: string,
    state: 'done' | 'expired' | 'cancelled',
    nowMs: number,
    result: DeferResult,
  ): boolean {
    const body =
      result.body !== undefined && result.body.byteLength <= MAX_RESULT_BODY_BYTES
        ? Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength)
        : null;
    return this.#write(
      () =>
        this.#finish.run({
          id,
          state,
          now: nowMs,
          status: result.status ?? null,
          body,
          type: body === null ? null : (result.contentType ?? null),
        }).changes === 1,
    );
  }

  get(id: string): DeferRecord | undefined {
    const r = this.#get.get(id) as Row | undefined;
    if (r === undefined) return undefined;
    return {
      item: toItem(r),
      state: r.state,
      ...(r.result_status !== null ? { resultStatus: r.result_status } : {}),
      updatedAtMs: r.updated_at_ms,
    };
  }

  /** The stored result of item `id` (status, and body when it was kept). */
  result(id: string): DeferResult | undefined {
    const r = this.#result.get(id) as
      | { result_status: number | null; result_body: Buffer | null; result_type: string | null }
      | undefined;
    if (r === undefined) return undefined;
    return {
      ...(r.result_status !== null ? { status: r.result_status } : {}),
      ...(r.result_body !== null ? { body: new Uint8Array(r.result_body) } : {}),
      ...(r.result_type !== null ? { contentType: r.result_type } : {}),
    };
  }

  backlog(): ReadonlyMap<string, number> {
    const m = new Map<string, number>();
    for (const r of this.#backlog.all() as { class: string; n: number }[]) m.set(r.class, r.n);
    return m;
  }

  /** Deletes up to `limit` finished items last changed before `beforeMs`. @returns how many */
  prune(beforeMs: number, limit = 1000): number {
    return this.#write(() => this.#prune.run(beforeMs, limit).changes);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #write<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      throw new DeferDbError(this.file, usageMessage(e));
    }
  }
}

function toItem(r: Row): DeferredItem {
  return {
    id: r.id,
    className: r.class,
    tenant: r.tenant,
    deferredAtMs: r.deferred_at_ms,
    deadlineMs: r.deadline_ms,
    seats: r.seats,
    ...(r.idem_key !== null ? { idempotencyKey: r.idem_key } : {}),
    payload: new Uint8Array(r.payload),
  };
}

/** Checks the directory exists and the path is not a directory, before SQLite makes up its own message. */
function preflight(file: string, path: string): void {
  const dir = dirname(path);
  let d: ReturnType<typeof statSync> | undefined;
  try {
    d = statSync(dir);
  } catch {
    throw new DeferDbError(file, `directory ${dir} does not exist`);
  }
  if (!d.isDirectory()) throw new DeferDbError(file, `${dir} is not a directory`);
  let s: ReturnType<typeof statSync> | undefined;
  try {
    s = statSync(path);
  } catch {
    return; // created on open
  }
  if (s.isDirectory()) throw new DeferDbError(file, 'is a directory, not a database file');
  if (!s.isFile()) throw new DeferDbError(file, 'is not a regular file');
}

/** Creates the schema in an empty database, or checks an existing one is ours and of this version. */
function migrate(db: Database.Database, file: string): void {
  let appId: number;
  let version: number;
  let tables: string[];
  try {
    appId = Number(db.pragma('application_id', { simple: true }));
    version = Number(db.pragma('user_version', { simple: true }));
    tables = (
      db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`).all() as {
        name: string;
      }[]
    )
      .map((t) => t.name)
      .filter((n) => n !== 'sqlite_sequence');
  } catch (e) {
    throw new DeferDbError(file, usageMessage(e));
  }
  if (appId === 0 && version === 0 && tables.length === 0) {
    db.transaction(() => {
      db.exec(SCHEMA);
      db.pragma(`application_id = ${DEFER_APPLICATION_ID}`);
      db.pragma(`user_version = ${DEFER_SCHEMA_VERSION}`);
    })();
    return;
  }
  if (appId !== DEFER_APPLICATION_ID) {
    const list = tables.length === 0 ? 'no tables' : `tables ${tables.slice(0, 5).join(', ')}`;
    throw new DeferDbError(
      file,
      `is a SQLite database of another application (application_id ${appId}, ${list}), not a Sluice defer database`,
    );
  }
  if (version !== DEFER_SCHEMA_VERSION)
    throw new DeferDbError(
      file,
      `has defer schema version ${version}; this Sluice reads version ${DEFER_SCHEMA_VERSION}`,
    );
  if (!tables.includes('items'))
    throw new DeferDbError(file, 'is a Sluice defer database without its items table (damaged)');
}

function isSqlite(e: unknown, code: string): boolean {
  return e instanceof Error && (e as Error & { code?: string }).code === code;
}

function sqliteMessage(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as Error & { code?: string }).code;
    return code === undefined ? e.message : `${e.message} (${code})`;
  }
  return String(e);
}

/** SQLite's error turned into what the user can act on. */
function usageMessage(e: unknown): string {
  const code = e instanceof Error ? (e as Error & { code?: string }).code : undefined;
  if (code === 'SQLITE_NOTADB') return 'is not a SQLite database';
  if (code === 'SQLITE_READONLY' || code?.startsWith('SQLITE_READONLY_') || code === 'SQLITE_CANTOPEN')
    return `cannot be opened for reading and writing (${sqliteMessage(e)})`;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')
    return 'is in use by another process (a defer database is opened by one proxy at a time)';
  if (code === 'SQLITE_FULL') return 'the disk is full';
  return sqliteMessage(e);
}
