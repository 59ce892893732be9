/**
 * `proofline sql [--csv | --json] [--max-rows N] ["SELECT ..."]` (alias `npm run sql -- …`) runs ad-hoc DuckDB SQL
 * over the current parquet snapshot of every domain. Tables are `domain.table` (`registry.companies`), and
 * unqualified where the name is unique: the same names as `duckdb -init DATA_DIR/warehouse/current.sql`.
 *
 * Output: a boxed table (default), `--csv` (RFC 4180, header row) or `--json` (an array of row objects; BIGINT and
 * DECIMAL as strings, as DuckDB's JSON conversion gives them). At most `--max-rows` rows (default 1000, 0 = all)
 * are printed; when more matched, a line on stderr says how many were left out. Whole results go to a file with
 * DuckDB's own `COPY (SELECT …) TO 'out.parquet' (FORMAT parquet)` (docs/operations.md#sql).
 *
 * With no SQL argument: an interactive prompt (or statements read from a pipe). A statement ends at `;` and may
 * span lines; `.tables` lists the tables, `.schema TABLE` its columns and types, `.help`, `.quit`.
 */
import { createInterface } from 'node:readline';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier } from '../../lib/warehouse/duckdb.ts';
import { openWarehouseViews } from '../../lib/warehouse/views.ts';
import { loadCliConfig, UsageError } from './cli-kit.ts';

export const DEFAULT_MAX_ROWS = 1000;

export interface SqlOptions {
  csv?: boolean;
  json?: boolean;
  /** 0 = no cap. */
  maxRows?: number;
}

type Row = Record<string, unknown>;

function cellText(v: unknown): string {
  return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function formatTable(rows: Row[], columns: string[], maxWidth = 40): string {
  const cell = (v: unknown) => {
    const s = v === null || v === undefined ? 'NULL' : cellText(v);
    return s.length > maxWidth ? `${s.slice(0, maxWidth - 1)}…` : s;
  };
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => `│ ${vals.map((v, i) => v.padEnd(widths[i])).join(' │ ')} │`;
  const sep = (l: string, m: string, r: string) => `${l}${widths.map((w) => '─'.repeat(w + 2)).join(m)}${r}`;
  return [
    sep('┌', '┬', '┐'),
    line(columns),
    sep('├', '┼', '┤'),
    ...rows.map((r) => line(columns.map((c) => cell(r[c])))),
    sep('└', '┴', '┘'),
    `${rows.length} row${rows.length === 1 ? '' : 's'}`,
  ].join('\n');
}

/** RFC 4180: a header row, fields with a comma, quote, CR or LF quoted with quotes doubled, CRLF-free (LF) lines; NULL is empty. */
export function formatCsv(rows: Row[], columns: string[]): string {
  const field = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return [columns.map(field).join(','), ...rows.map((r) => columns.map((c) => field(cellText(r[c]))).join(','))].join('\n');
}

/** Runs one statement, keeps at most `max` rows (0 = all) and counts the rest without keeping them. */
async function query(conn: DuckDBConnection, sql: string, max: number): Promise<{ columns: string[]; rows: Row[]; omitted: number }> {
  const result = await conn.stream(sql);
  const columns = result.columnNames();
  const rows: Row[] = [];
  let omitted = 0;
  for await (const chunk of result.yieldRowObjectJson()) {
    for (const r of chunk) {
      if (max === 0 || rows.length < max) rows.push(r as Row);
      else omitted++;
    }
  }
  return { columns, rows, omitted };
}

function printResult(r: { columns: string[]; rows: Row[]; omitted: number }, opts: SqlOptions, max: number): void {
  if (opts.csv) console.log(formatCsv(r.rows, r.columns));
  else if (opts.json) console.log(JSON.stringify(r.rows, null, 1));
  else console.log(formatTable(r.rows, r.columns));
  if (r.omitted > 0)
    console.error(
      `${r.omitted} more row${r.omitted === 1 ? '' : 's'} left out (--max-rows ${max}; --max-rows 0 prints all, COPY (…) TO 'file' writes all)`,
    );
}

/** `registry.companies` → `"registry"."companies"`; a usage error for anything else. */
function qualifiedName(name: string, tables: string[]): string {
  const known = tables.includes(name) || tables.some((t) => t.endsWith(`.${name}`));
  if (!known) throw new UsageError(`no table ${name}; .tables lists them`);
  return name.split('.').map(quoteIdentifier).join('.');
}

export async function runSql(sqlArgs: string[], opts: SqlOptions): Promise<number> {
  if (opts.csv && opts.json) throw new UsageError('--csv and --json exclude each other');
  const max = opts.maxRows ?? DEFAULT_MAX_ROWS;
  const config = loadCliConfig();
  const { conn, tables } = await openWarehouseViews(config.dataDir, { memoryLimit: config.DUCKDB_MEMORY_LIMIT });
  const sql = sqlArgs.join(' ').trim();
  if (sql) {
    printResult(await query(conn, sql, max), opts, max);
    return 0;
  }
  const interactive = Boolean(process.stdin.isTTY);
  if (interactive) {
    if (!tables.length) console.log('no snapshot published yet: run `npm start` or `proofline ingest` first');
    console.log(`tables: ${tables.join(', ')}\nstatements end with ';'. .tables, .schema TABLE, .help, .quit`);
  }
  const rl = createInterface({ input: process.stdin, output: interactive ? process.stdout : undefined, terminal: interactive });
  const prompt = (more: boolean) => {
    if (!interactive) return;
    rl.setPrompt(more ? '      ...> ' : 'proofline> ');
    rl.prompt();
  };
  let failed = false;
  let buffer = '';
  prompt(false);
  for await (const line of rl) {
    const text = line.trim();
    if (!buffer && text.startsWith('.')) {
      const [cmd, arg] = text.split(/\s+/);
      if (cmd === '.quit' || cmd === '.exit') break;
      try {
        if (cmd === '.tables') console.log(tables.join('\n'));
        else if (cmd === '.schema') {
          if (!arg) throw new UsageError('usage: .schema TABLE');
          printResult(await query(conn, `DESCRIBE ${qualifiedName(arg, tables)}`, 0), opts, 0);
        } else if (cmd === '.help') console.log(".tables  .schema TABLE  .quit   SQL statements end with ';'");
        else throw new UsageError(`unknown command ${cmd} (.help)`);
      } catch (e) {
        failed = true;
        console.error((e as Error).message);
      }
      prompt(false);
      continue;
    }
    buffer += `${buffer ? '\n' : ''}${line}`;
    if (!text.endsWith(';')) {
      prompt(buffer.trim() !== '');
      if (!buffer.trim()) buffer = '';
      continue;
    }
    const statement = buffer;
    buffer = '';
    try {
      printResult(await query(conn, statement, max), opts, max);
    } catch (e) {
      failed = true;
      console.error((e as Error).message);
    }
    prompt(false);
  }
  rl.close();
  if (buffer.trim()) {
    // Input ended without ';': run what was typed (a pipe's last statement).
    try {
      printResult(await query(conn, buffer, max), opts, max);
    } catch (e) {
      failed = true;
      console.error((e as Error).message);
    }
  }
  // Interactive sessions end 0 (errors were shown as they came); piped input exits 1 when a statement failed.
  return !interactive && failed ? 1 : 0;
}
