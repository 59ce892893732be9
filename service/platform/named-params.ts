/**
 * Named parameters over the state store's positional ones: a family whose state SQL names its parameters
 * (`$account_id`) binds an object, `tx.read(...bindNamed(SQL.list, { account_id, limit }))`. Each name becomes
 * `$n` in order of first appearance (a name used twice is one parameter), so the statement the store runs is the
 * portable positional form (state.types.ts `SqlParams`). A name the SQL uses and the object lacks binds NULL.
 */
import { existsSync } from 'node:fs';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { SqlParams } from './state.types.ts';

const NAME = /\$([A-Za-z_][A-Za-z0-9_]*)/g;
const compiled = new Map<string, { sql: string; names: string[] }>();

function compile(sql: string): { sql: string; names: string[] } {
  let c = compiled.get(sql);
  if (!c) {
    const names: string[] = [];
    const text = sql.replace(NAME, (_m, name: string) => {
      let i = names.indexOf(name);
      if (i < 0) i = names.push(name) - 1;
      return `$${i + 1}`;
    });
    c = { sql: text, names };
    compiled.set(sql, c);
  }
  return c;
}

/** `[positional SQL, positional params]` for a statement with `$name` parameters and an object of values. */
export function bindNamed(sql: string, params: Record<string, unknown> = {}): [string, SqlParams] {
  const c = compile(sql);
  return [c.sql, c.names.map((n) => (params[n] === undefined ? null : (params[n] as SqlParams[number])))];
}

/**
 * A state statement with its text per backend: `name.sql` is portable (or DuckDB's), and `name.postgres.sql`,
 * when it exists beside it, is PostgreSQL's (list functions, JSON array parameters and the like differ).
 */
export interface DialectSql {
  readonly duckdb: string;
  readonly postgres: string;
}

/** Loads `relPath` (and `relPath` with `.postgres.sql` for PostgreSQL when present) relative to `base` (import.meta.url). */
export function loadDialectSql(relPath: string, base: string): DialectSql {
  const duckdb = loadSql(relPath, base);
  const pg = relPath.replace(/\.sql$/, '.postgres.sql');
  return { duckdb, postgres: existsSync(new URL(pg, base)) ? loadSql(pg, base) : duckdb };
}

/** `bindNamed` of the statement's text for `store`'s backend. */
export function bindFor(store: { readonly backend: 'duckdb' | 'postgres' }, sql: DialectSql, params: Record<string, unknown> = {}) {
  return bindNamed(sql[store.backend], params);
}
