/**
 * `npm run sql -- "SELECT ..."` runs ad-hoc DuckDB SQL over the current parquet
 * snapshot of every domain and prints a table; with no argument, an
 * interactive prompt (`.tables`, `.quit`). Tables are `domain.table`
 * (`registry.companies`), and unqualified where the name is unique.
 */
import { createInterface } from 'node:readline/promises';
import { loadConfig } from '../../lib/config.ts';
import { openWarehouseViews } from '../../lib/warehouse/views.ts';

export function formatTable(rows: Record<string, unknown>[], columns: string[], maxWidth = 40): string {
  const cell = (v: unknown) => {
    const s = v === null || v === undefined ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v);
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

const config = loadConfig(process.env);
const { conn, tables } = await openWarehouseViews(config.dataDir, { memoryLimit: config.DUCKDB_MEMORY_LIMIT });
async function run(sql: string): Promise<void> {
  const reader = await conn.runAndReadAll(sql);
  console.log(formatTable(reader.getRowObjectsJson() as Record<string, unknown>[], reader.columnNames()));
}

const sql = process.argv.slice(2).join(' ').trim();
if (sql) {
  try {
    await run(sql);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
} else {
  if (!tables.length) console.log('no snapshot published yet: run `npm start` or `npm run ingest` first');
  console.log(`tables: ${tables.join(', ')}\n.tables lists them, .quit exits`);
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'proofline> ' });
  rl.prompt();
  for await (const line of rl) {
    const q = line.trim();
    if (q === '.quit' || q === '.exit') break;
    if (q === '.tables') console.log(tables.join('\n'));
    else if (q) await run(q).catch((e: Error) => console.error(e.message));
    rl.prompt();
  }
  rl.close();
}
