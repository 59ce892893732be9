/**
 * The query log: one row per metered /api request, feeding /api/ir/rankings
 * and /api/stats. Requests only push into an in-memory buffer (O(1), never
 * awaited); a timer flushes the buffer to a DuckDB file owned by the server
 * process (`DATA_DIR/state/query-log.duckdb`) through an Appender, so logging
 * never slows a request. One writer per DuckDB file (tech.md): a second
 * server process on the same DATA_DIR cannot open it and logs to its own
 * in-memory database instead (with a warning); run one API process per
 * DATA_DIR, or accept per-process rankings.
 *
 * Clients are stored as `key:<key_id>` or `ip:<first 16 hex of SHA-256(ip)>`,
 * never raw IPs.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '../../lib/log.ts';
import { queryRows, type Params, type Row } from '../../lib/warehouse/duckdb.ts';

export interface QueryLogEntry {
  ts_ms: number;
  client: string;
  tier: string;
  agent_type: string;
  method: string;
  path: string;
  ticker: string | null;
  status: number;
  duration_ms: number;
}

const DDL = /* sql */ `CREATE TABLE IF NOT EXISTS query_log (
  ts_ms BIGINT NOT NULL, client VARCHAR NOT NULL, tier VARCHAR NOT NULL, agent_type VARCHAR NOT NULL,
  method VARCHAR NOT NULL, path VARCHAR NOT NULL, ticker VARCHAR, status INTEGER NOT NULL, duration_ms DOUBLE NOT NULL)`;

/** Rows held in memory at most; beyond this (writer stalled) the oldest are dropped and counted. */
const MAX_BUFFER = 200_000;

export class QueryLog {
  private buffer: QueryLogEntry[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Rows dropped because the buffer overflowed. */
  dropped = 0;
  /** Rows written so far. */
  written = 0;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    private readonly reader: DuckDBConnection,
    readonly file: string,
    private readonly log?: Logger,
  ) {}

  /** Opens (creating) the log database at `file`; falls back to an in-memory database when the file is locked by another process. */
  static async open(file: string, opts: { flushMs?: number; log?: Logger } = {}): Promise<QueryLog> {
    let instance: DuckDBInstance;
    let where = file;
    try {
      await mkdir(path.dirname(file), { recursive: true });
      instance = await DuckDBInstance.create(file, { threads: '1', memory_limit: '256MB' });
    } catch (e) {
      opts.log?.warn({ err: (e as Error).message, file }, 'query log file unavailable (another process owns it?): logging to memory');
      instance = await DuckDBInstance.create(':memory:', { threads: '1' });
      where = ':memory:';
    }
    const writer = await instance.connect();
    await writer.run(DDL);
    const reader = await instance.connect();
    const q = new QueryLog(instance, writer, reader, where, opts.log);
    q.timer = setInterval(() => void q.flush().catch((err) => opts.log?.warn({ err }, 'query log flush failed')), opts.flushMs ?? 1000);
    q.timer.unref();
    return q;
  }

  /** Queues one entry (synchronous, allocation only). */
  push(e: QueryLogEntry): void {
    if (this.buffer.length >= MAX_BUFFER) {
      this.buffer.shift();
      this.dropped++;
    }
    this.buffer.push(e);
  }

  /** Writes the buffered entries now; concurrent callers share one flush. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.buffer.length ? this.flush() : undefined));
    if (this.buffer.length === 0) return Promise.resolve();
    this.flushing = this.doFlush().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    const rows = this.buffer;
    this.buffer = [];
    const app = await this.writer.createAppender('query_log');
    try {
      for (const r of rows) {
        app.appendBigInt(BigInt(Math.trunc(r.ts_ms)));
        app.appendVarchar(r.client);
        app.appendVarchar(r.tier);
        app.appendVarchar(r.agent_type);
        app.appendVarchar(r.method);
        app.appendVarchar(r.path);
        if (r.ticker === null) app.appendNull();
        else app.appendVarchar(r.ticker);
        app.appendInteger(r.status);
        app.appendDouble(r.duration_ms);
        app.endRow();
      }
      app.flushSync();
      this.written += rows.length;
    } finally {
      app.closeSync();
    }
  }

  /** Runs a read query over `query_log` after flushing what is buffered. */
  async query(sql: string, params?: Params): Promise<Row[]> {
    await this.flush();
    return queryRows(this.reader, sql, params);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush().catch((err) => this.log?.warn({ err }, 'final query log flush failed'));
    this.writer.closeSync();
    this.reader.closeSync();
    this.instance.closeSync();
  }
}
