/**
 * The embedded state store's read cache (issue 22: the account-state routes
 * made two to four state queries per request). One process owns the embedded
 * file and every write goes through its writer queue (state.duckdb.ts), so the
 * process knows every table a committed group wrote:
 *
 * - Each table has a version, bumped when a group that wrote it commits
 *   (before the group's callers are resolved). A statement whose targets
 *   cannot be read from its text (DDL, anything not a plain SELECT / INSERT /
 *   UPDATE / DELETE) bumps the global version, which invalidates everything.
 * - A cached read records the versions of the tables its SQL reads (every
 *   identifier of its text: readTables) as they were before it was sent; it answers later
 *   reads while every one of them is unchanged. So a read that starts after a
 *   write's promise resolved never sees rows from before that write (tested:
 *   test/platform/state-read-cache.test.ts).
 * - Entries are bounded: all are dropped past `maxEntries` entries or about
 *   `maxBytes` of row values (a vetting record's JSON is kilobytes).
 *
 * PostgreSQL has no such cache: other nodes write the same tables.
 */
import type { Row } from '../../lib/warehouse/duckdb.ts';
import type { SqlParams } from './state.types.ts';

/** A table name, bare or quoted, optionally schema-qualified (the last part is the table). */
const NAME = String.raw`"?([A-Za-z_]\w*)"?(?:\s*\.\s*"?([A-Za-z_]\w*)"?)?`;
const WRITE_TARGET = new RegExp(String.raw`\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)\s+${NAME}`, 'gi');
const SCHEMA_CHANGE = /\b(?:CREATE|DROP|ALTER|ATTACH|DETACH|IMPORT|COPY|CHECKPOINT|VACUUM)\b/i;
const PLAIN_READ = /^\s*(?:SELECT|WITH|VALUES)\b/i;

/** The statement without its `--` comments (their words name no table). */
const code = (sql: string) => sql.replace(/--[^\n]*/g, ' ');

const writtenMemo = new Map<string, string[] | null>();

/** Tables a statement may write: their names, or null when that cannot be told from its text (bump everything). */
export function writtenTables(sql: string): string[] | null {
  const memo = writtenMemo.get(sql);
  if (memo !== undefined) return memo;
  const c = code(sql);
  let out: string[] | null = null;
  if (!SCHEMA_CHANGE.test(c)) {
    const found = [...c.matchAll(WRITE_TARGET)].map((m) => (m[2] ?? m[1]!).toLowerCase());
    out = found.length > 0 ? found : PLAIN_READ.test(c) ? [] : null;
  }
  if (writtenMemo.size > 1000) writtenMemo.clear();
  writtenMemo.set(sql, out);
  return out;
}

const SQL_WORDS = new Set(
  'select from where and or not null is in as on join left right inner outer cross full group by order having limit offset asc desc case when then else end cast integer bigint varchar double boolean true false count sum max min coalesce distinct exists union all with values between like'.split(
    ' ',
  ),
);

/**
 * What a read depends on: every identifier in its text (comments removed) but SQL keywords. That is a superset of
 * the tables it reads whatever the syntax (comma joins, subqueries, quoted or schema-qualified names), since a
 * table cannot be read without being named; the other words (columns, aliases) are never written, so they never
 * invalidate anything.
 */
export function readTables(sql: string): string[] {
  return [...new Set((code(sql).match(/[A-Za-z_]\w*/g) ?? []).map((w) => w.toLowerCase()))].filter((w) => !SQL_WORDS.has(w));
}

interface Entry {
  tables: string[];
  versions: number[];
  global: number;
  rows: Promise<Row[]>;
}

export class StateReadCache {
  private readonly versions = new Map<string, number>();
  private global = 0;
  private readonly entries = new Map<string, Entry>();
  private readonly tablesOf = new Map<string, string[]>();
  /** Reads answered from the cache, and reads sent to the database (tests and benchmarks count them). */
  readonly stats = { hits: 0, misses: 0 };

  /** About how many bytes of row values the entries hold (string lengths, 8 per other value). */
  private bytes = 0;

  constructor(
    private readonly maxEntries = 20_000,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  private dropAll(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /** Marks tables as written by a group that has just committed (null: unknown, everything). */
  bump(tables: Iterable<string> | null): void {
    if (tables === null) {
      this.global++;
      this.dropAll();
      return;
    }
    for (const t of tables) this.versions.set(t, (this.versions.get(t) ?? 0) + 1);
  }

  /** Forgets everything (a group rolled back after writing: nothing changed, but be plain about it). */
  clear(): void {
    this.bump(null);
  }

  /** The cached rows of `sql` with `params` while still valid, else `load()`'s (then cached). */
  read(sql: string, params: SqlParams | undefined, load: () => Promise<Row[]>): Promise<Row[]> {
    let tables = this.tablesOf.get(sql);
    if (!tables) {
      tables = readTables(sql);
      if (this.tablesOf.size > 1000) this.tablesOf.clear();
      this.tablesOf.set(sql, tables);
    }
    if (tables.length === 0) {
      this.stats.misses++;
      return load();
    }
    const key = params?.length ? `${sql}\u0000${JSON.stringify(params, bigintSafe)}` : sql;
    const hit = this.entries.get(key);
    if (hit && this.valid(hit)) {
      this.stats.hits++;
      return hit.rows.then((r) => r.slice());
    }
    this.stats.misses++;
    const entry: Entry = {
      tables,
      versions: tables.map((t) => this.versions.get(t) ?? 0),
      global: this.global,
      rows: load(),
    };
    if (this.entries.size >= this.maxEntries || this.bytes >= this.maxBytes) this.dropAll();
    this.entries.set(key, entry);
    entry.rows.then(
      (rows) => {
        if (this.entries.get(key) === entry) this.bytes += sizeOf(rows);
      },
      () => undefined,
    );
    entry.rows.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.rows.then((r) => r.slice());
  }

  private valid(e: Entry): boolean {
    if (e.global !== this.global) return false;
    for (let i = 0; i < e.tables.length; i++) if ((this.versions.get(e.tables[i]!) ?? 0) !== e.versions[i]) return false;
    return true;
  }
}

function sizeOf(rows: Row[]): number {
  let n = 0;
  for (const r of rows) for (const v of Object.values(r)) n += typeof v === 'string' ? v.length : 8;
  return n;
}

const bigintSafe = (_k: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);
