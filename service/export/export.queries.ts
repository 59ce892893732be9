/**
 * Bulk export of any table of a domain's current snapshot (docs/architecture.md#bulk-export): the parquet file
 * itself with its manifest SHA-256 (so a client can check it against the signed manifest), or the rows as CSV
 * (RFC 4180, header row) or NDJSON written by DuckDB from that parquet. HTTP only (no MCP tool: a tool answer is
 * not a file). The tier rule is the route's; this module knows files.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError, NotFoundError, SourceUnavailableError } from '../../lib/errors.ts';
import { openDatabase, quoteLiteral } from '../../lib/warehouse/duckdb.ts';
import { snapshotDir, tempDir } from '../../lib/warehouse/layout.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { tableFilePaths } from '../../lib/warehouse/snapshot.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
  parquet: 'application/vnd.apache.parquet',
};

/** Every exportable table of the served domains: name, rows, the manifest SHA-256, the formats. */
export function listExportTables(readers: Record<string, SnapshotReader | undefined>) {
  const tables = [];
  for (const [domain, r] of Object.entries(readers)) {
    const m = r?.manifest;
    if (!m) continue;
    for (const [table, tm] of Object.entries(m.tables))
      tables.push({
        domain,
        table,
        snapshot_id: m.snapshot_id,
        rows: tm.rows,
        sha256: tm.sha256,
        bytes: tm.bytes,
        formats: tm.files ? ['csv', 'ndjson'] : [...EXPORT_FORMATS],
        path: `/api/export/${domain}/${table}`,
      });
  }
  return { count: tables.length, tables };
}

export interface ExportFile {
  /** An open file: the snapshot's parquet, or a temporary file already unlinked (it lives while the stream reads it). */
  file: Awaited<ReturnType<typeof open>>;
  bytes: number;
  contentType: string;
  filename: string;
  snapshotId: string;
  /** The manifest SHA-256 of the table (of its parquet file; for csv/ndjson, the parquet the rows came from). */
  sha256: string;
  rows: number;
}

/** Opens the export of `domain.table` in `format`; 404 for an unknown domain or table, 400 for a format it has not. */
export async function openTableExport(
  readers: Record<string, SnapshotReader | undefined>,
  dataDir: string,
  domain: string,
  table: string,
  format: ExportFormat,
): Promise<ExportFile> {
  const reader = readers[domain];
  if (!reader) throw new NotFoundError(`no domain ${domain}; GET /api/export lists the tables`, { response: { parameter: 'domain' } });
  const m = reader.manifest;
  if (!m) throw new SourceUnavailableError(`no ${domain} snapshot published yet`);
  const tm = m.tables[table];
  if (!tm) throw new NotFoundError(`no table ${domain}.${table}; GET /api/export lists the tables`, { response: { parameter: 'table' } });
  const files = tableFilePaths(snapshotDir(dataDir, domain, m.snapshot_id), table, tm);
  const base = { snapshotId: m.snapshot_id, sha256: tm.sha256, rows: tm.rows, contentType: CONTENT_TYPES[format] };
  if (format === 'parquet') {
    if (tm.files)
      throw new InvalidInputError(`${domain}.${table} is published as ${files.length} part files: ask for format=csv or ndjson`, {
        response: { parameter: 'format' },
      });
    const file = await open(files[0]!, 'r');
    return { ...base, file, bytes: (await file.stat()).size, filename: `${domain}.${table}.${m.snapshot_id}.parquet` };
  }
  // DuckDB writes the rows to a private temporary file, which is unlinked once open: nothing is left behind.
  const dir = tempDir(dataDir);
  await mkdir(dir, { recursive: true });
  const out = path.join(dir, `export-${randomBytes(8).toString('hex')}.${format}`);
  const db = await openDatabase(':memory:', { memoryLimit: '256MB', threads: 1, tempDirectory: dir });
  try {
    const conn = await db.connect();
    const options = format === 'csv' ? 'FORMAT csv, HEADER true' : 'FORMAT json';
    // Paths come from the manifest and this module (never from the request): spliced as quoted literals.
    await conn.run(`COPY (SELECT * FROM read_parquet([${files.map(quoteLiteral).join(', ')}])) TO ${quoteLiteral(out)} (${options})`);
    conn.closeSync();
  } finally {
    db.closeSync();
  }
  const file = await open(out, 'r');
  await unlink(out);
  return { ...base, file, bytes: (await file.stat()).size, filename: `${domain}.${table}.${m.snapshot_id}.${format}` };
}
