/**
 * Named parameters over the state store's positional ones: a family whose state SQL names its parameters
 * (`$account_id`) binds an object, `tx.read(...bindNamed(SQL.list, { account_id, limit }))`. Each name becomes
 * `$n` in order of first appearance (a name used twice is one parameter), so the statement the store runs is the
 * portable positional form (state.types.ts `SqlParams`). A name the SQL uses and the object lacks binds NULL.
 */
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
