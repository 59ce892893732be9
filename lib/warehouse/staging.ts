/**
 * A staging run: where one ingest run writes its rows before publishing. Any
 * number of processes (in-process runner or BullMQ workers) may write parts of
 * the same run concurrently, because each part is its own parquet file named by
 * a deterministic key: a retried job overwrites its own part and never
 * duplicates rows. Only `publishRun` (one writer, under a lock) reads them all.
 *
 * Parts are written as NDJSON then converted to typed parquet by an in-memory
 * DuckDB that knows the domain's DDL, so a row that does not fit its column
 * types fails the job that produced it, not the publish.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { createSourceLeaf, type OriginLeaf, type SourceRef } from '../origin.ts';
import { domainTablesSql, type DomainSpec } from './domain.ts';
import { openDatabase, queryRows, quoteIdentifier, quoteLiteral } from './duckdb.ts';
import { sha256Hex } from '../hash.ts';
import { INPUT_PARTS_DIR, type InputParts } from './incremental.ts';
import { assertSafeName, stagingDir, toPartKey } from './layout.ts';

/** One rejected row or file, kept for inspection with file, line and reason. */
export interface Reject {
  dataset: string;
  file: string;
  line: number | null;
  reason: string;
  raw: string | null;
}

export interface StagingOptions {
  memoryLimit?: string;
  threads?: number;
}

/** A source file as read by a processor: its SourceRef plus the local path. */
export interface IngestedSource extends SourceRef {
  path: string | null;
}

const scratchInstances = new Map<string, Promise<{ db: DuckDBInstance; columns: Map<string, Map<string, string>> }>>();

/** Process-wide in-memory DuckDB with the domain's tables created, used to type and convert parts. */
async function scratchFor(spec: DomainSpec, opts: StagingOptions) {
  let p = scratchInstances.get(spec.domain);
  if (!p) {
    p = (async () => {
      const db = await openDatabase(':memory:', { memoryLimit: opts.memoryLimit ?? '512MB', threads: opts.threads ?? 1 });
      const conn = await db.connect();
      await conn.run(domainTablesSql(spec));
      const rows = await queryRows(
        conn,
        `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' ORDER BY table_name, ordinal_position`,
      );
      conn.closeSync();
      const columns = new Map<string, Map<string, string>>();
      for (const r of rows) {
        const t = String(r.table_name);
        if (!columns.has(t)) columns.set(t, new Map());
        columns.get(t)!.set(String(r.column_name), String(r.data_type));
      }
      return { db, columns };
    })();
    scratchInstances.set(spec.domain, p);
  }
  return p;
}

export class StagingRun {
  private constructor(
    readonly dataDir: string,
    readonly spec: DomainSpec,
    readonly runId: string,
    readonly dir: string,
    private readonly opts: StagingOptions,
  ) {}

  /** Opens (creating if needed) the staging area of `runId`. Safe to call from several processes. */
  static async open(dataDir: string, spec: DomainSpec, runId: string, opts: StagingOptions = {}): Promise<StagingRun> {
    assertSafeName('run id', runId);
    const dir = stagingDir(dataDir, spec.domain, runId);
    await mkdir(path.join(dir, 'parts'), { recursive: true });
    return new StagingRun(dataDir, spec, runId, dir, opts);
  }

  get domain(): string {
    return this.spec.domain;
  }

  /** Table names known to the domain (its DDL plus the common tables). */
  async tableNames(): Promise<string[]> {
    return [...(await scratchFor(this.spec, this.opts)).columns.keys()];
  }

  /** Columns of a domain table as its DDL declares them, in order: name → DuckDB type. */
  async tableColumns(table: string): Promise<Map<string, string>> {
    const cols = (await scratchFor(this.spec, this.opts)).columns.get(table);
    if (!cols) throw new Error(`table ${table} is not defined in domain ${this.domain}`);
    return new Map(cols);
  }

  /** Absolute path of a part file; parts of one table share a directory. */
  partPath(table: string, key: string): string {
    return path.join(this.dir, 'parts', assertSafeName('table', table), `${toPartKey(key)}.parquet`);
  }

  /** Writes `rows` as the part `key` of `table`, replacing an earlier part with the same key. Returns the row count. */
  async writeRows(table: string, key: string, rows: readonly object[]): Promise<number> {
    return this.writeRowBatches(
      table,
      key,
      (async function* () {
        yield rows;
      })(),
    );
  }

  /** Streams batches of rows into one part (bounded memory for large inputs). */
  async writeRowBatches(
    table: string,
    key: string,
    batches: AsyncIterable<readonly object[]> | Iterable<readonly object[]>,
  ): Promise<number> {
    const scratch = await scratchFor(this.spec, this.opts);
    const cols = scratch.columns.get(table);
    if (!cols) throw new Error(`table ${table} is not defined in domain ${this.domain}`);
    const target = this.partPath(table, key);
    await mkdir(path.dirname(target), { recursive: true });
    const ndjson = `${target}.${process.pid}.ndjson`;
    const out = createWriteStream(ndjson);
    let count = 0;
    try {
      for await (const batch of batches) {
        if (batch.length === 0) continue;
        let chunk = '';
        for (const r of batch) chunk += JSON.stringify(r, jsonReplacer) + '\n';
        count += batch.length;
        if (!out.write(chunk)) await once(out, 'drain');
      }
      out.end();
      await once(out, 'close');
      await this.convertNdjson(scratch.db, table, cols, ndjson, target, count);
    } finally {
      await rm(ndjson, { force: true });
    }
    return count;
  }

  private async convertNdjson(
    db: DuckDBInstance,
    table: string,
    cols: Map<string, string>,
    ndjson: string,
    target: string,
    count: number,
  ): Promise<void> {
    const tmp = `${target}.${process.pid}.tmp`;
    const conn = await db.connect();
    try {
      const colList = [...cols.keys()].map(quoteIdentifier).join(', ');
      const source =
        count === 0
          ? `SELECT ${colList} FROM ${quoteIdentifier(table)} LIMIT 0`
          : `SELECT ${colList} FROM read_json(${quoteLiteral(ndjson)}, format = 'newline_delimited', columns = {${[...cols]
              .map(([c, t]) => `${quoteLiteral(c)}: ${quoteLiteral(t)}`)
              .join(', ')}})`;
      await conn.run(`COPY (${source}) TO ${quoteLiteral(tmp)} (FORMAT parquet, COMPRESSION zstd)`);
      await rename(tmp, target);
    } finally {
      conn.closeSync();
      await rm(tmp, { force: true });
    }
  }

  /**
   * Runs `fn` with a scratch connection that has the domain's tables (empty).
   * For DuckDB-native loads: `COPY (SELECT … FROM read_csv(…)) TO run.partPath(…)`.
   */
  async withScratch<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const scratch = await scratchFor(this.spec, this.opts);
    const conn = await scratch.db.connect();
    try {
      return await fn(conn);
    } finally {
      conn.closeSync();
    }
  }

  /** Records one ingested input in `sources` and its source leaf in `origin_leaves`; returns the leaf. */
  async recordSource(src: IngestedSource, counts: SourceCounts = {}, key?: string): Promise<OriginLeaf> {
    const leaf = createSourceLeaf(src);
    const partKey = key ?? `${src.source}-${src.content_sha256.slice(0, 16)}`;
    await this.writeRows('sources', partKey, [sourceRow(this.runId, src, leaf, counts)]);
    await this.writeLeaves(`source-${partKey}`, [leaf], 'sources');
    return leaf;
  }

  /** Writes origin leaves issued by this run (deduplicated by hash at publish). */
  async writeLeaves(key: string, leaves: readonly OriginLeaf[], tableName: string | null = null): Promise<number> {
    return this.writeRows(
      'origin_leaves',
      `leaves-${key}`,
      leaves.map((l) => ({ ...l, table_name: tableName, first_run_id: this.runId })),
    );
  }

  /** Writes rejected rows or files for inspection. */
  async writeRejects(key: string, rejects: readonly Reject[]): Promise<number> {
    if (rejects.length === 0) return 0;
    return this.writeRows(
      'rejects',
      `rejects-${key}`,
      rejects.map((r) => ({ ...r, run_id: this.runId })),
    );
  }

  /**
   * Part reuse (lib/warehouse/incremental.ts): records which parts hold the rows of one input, so the next run
   * can hard-link them instead of parsing the input again. `input.path` is relative to the run's input directory
   * ('/'-separated, the ledger's path), `input.sha256` that of the bytes parsed; every part must hold rows of this
   * input only. Parts not written (a reject part of a file without rejects) are left out.
   */
  async recordInputParts(
    input: { path: string; sha256: string; bytes?: number },
    parts: ReadonlyArray<{ table: string; key: string }>,
  ): Promise<void> {
    const present: string[] = [];
    for (const p of parts) {
      const file = this.partPath(p.table, p.key);
      if (
        await stat(file).then(
          (st) => st.isFile(),
          () => false,
        )
      )
        present.push(`${p.table}/${path.basename(file)}`);
    }
    const dir = path.join(this.dir, INPUT_PARTS_DIR);
    await mkdir(dir, { recursive: true });
    const target = path.join(dir, `${toPartKey(input.path).slice(0, 120)}-${sha256Hex(input.path).slice(0, 12)}.json`);
    const record: InputParts = {
      path: input.path,
      sha256: input.sha256,
      ...(input.bytes != null ? { bytes: input.bytes } : {}),
      parts: [...new Set(present)].sort(),
    };
    await writeFile(`${target}.tmp`, JSON.stringify(record));
    await rename(`${target}.tmp`, target);
  }

  /** Stores a small JSON document in the run directory (plans, child results). */
  async writeJson(name: string, value: unknown): Promise<void> {
    const p = path.join(this.dir, `${toPartKey(name)}.json`);
    await writeFile(`${p}.tmp`, JSON.stringify(value, null, 2));
    await rename(`${p}.tmp`, p);
  }

  /** Tables that have at least one part in this run. */
  async tablesWithParts(): Promise<string[]> {
    const dir = path.join(this.dir, 'parts');
    const names = await readdir(dir).catch(() => [] as string[]);
    const out: string[] = [];
    for (const n of names) {
      const files = await readdir(path.join(dir, n)).catch(() => [] as string[]);
      if (files.some((f) => f.endsWith('.parquet'))) out.push(n);
    }
    return out;
  }

  /** Removes the staging directory (after publish or when abandoning a run). */
  async discard(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  async exists(): Promise<boolean> {
    return stat(this.dir).then(
      () => true,
      () => false,
    );
  }
}

export interface SourceCounts {
  rows?: number;
  rejects?: number;
}

/** The `sources` row of one ingested input (see common-tables.sql). */
export function sourceRow(runId: string, src: IngestedSource, leaf: OriginLeaf, counts: SourceCounts = {}): object {
  return {
    run_id: runId,
    dataset: src.source,
    path: src.path,
    source_url: src.source_url,
    byte_size: src.byte_size,
    content_sha256: src.content_sha256,
    retrieved_at: src.retrieved_at,
    ingested_at: new Date().toISOString(),
    leaf_hash: leaf.leaf_hash,
    row_count: counts.rows ?? null,
    reject_count: counts.rejects ?? null,
  };
}

/** JSON replacer: BigInt as decimal string, Date as ISO, undefined as null. */
function jsonReplacer(_k: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v === undefined) return null;
  return v;
}
