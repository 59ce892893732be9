/**
 * The query log in PostgreSQL (DATABASE_URL; the embedded default is
 * query-log.ts). Requests fill the same off-heap buffer of NDJSON lines
 * (`QueryLogBuffer`: nothing per row on the event loop beyond writing the
 * line); a timer sends the buffer as one text parameter per chunk to one
 * INSERT (query-log-insert.postgres.sql: PostgreSQL splits the lines and
 * reads each with `json_populate_record`). Every API node appends to one
 * `query_log` table (migration 0004), so /api/ir/rankings and /api/stats on
 * any node count every node's requests, each node's own rows at most one
 * flush interval late (its own are written before it reads).
 *
 * Telemetry, never acknowledged data (as the embedded log): rows still in
 * memory are lost if the process dies; commits use `synchronous_commit = off`
 * (a crash of PostgreSQL itself may lose the last few hundred milliseconds of
 * log rows, never state). While PostgreSQL is unreachable the rows are kept
 * and sent again (up to the buffer's bound, then dropped and counted); reads
 * answer 503 with Retry-After.
 */
import type postgres from 'postgres';
import { SourceUnavailableError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { loadSql, type Params, type Row } from '../../lib/warehouse/duckdb.ts';
import { bindNamed } from './named-params.ts';
import { MAX_QUERY_LOG_BUFFER, QueryLogBuffer } from './query-log.ts';
import { connectMigrated, isUnavailable } from './state.postgres.ts';

const INSERT = loadSql('./query-log-insert.postgres.sql', import.meta.url);

type Sql = postgres.Sql<Record<string, never>>;

export class PgQueryLog extends QueryLogBuffer {
  readonly file = 'postgres';
  /** Lines a failed write left, sent before newer ones. */
  private retry: { chunks: Buffer[]; rows: number } | null = null;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly sql: Sql,
    private readonly log?: Logger,
  ) {
    super();
  }

  /** Connects (two connections), applies pending migrations, and starts the flush timer. Throws when PostgreSQL cannot be reached. */
  static async open(url: string, opts: { flushMs?: number; log?: Logger } = {}): Promise<PgQueryLog> {
    const sql = await connectMigrated(url, {
      max: 2,
      connect_timeout: 5,
      connection: { application_name: 'proofline-query-log', synchronous_commit: 'off' },
    });
    const q = new PgQueryLog(sql, opts.log);
    // A failed write has been logged (and its rows kept) by write(): nothing more to say here.
    q.timer = setInterval(() => void q.flush().catch(() => undefined), opts.flushMs ?? 1000);
    q.timer.unref();
    return q;
  }

  /** Writes the buffered rows (one INSERT per chunk, in one transaction); concurrent callers share one write. */
  override flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.pendingRows ? this.flush() : undefined));
    if (this.pendingRows === 0 && this.retry === null) return Promise.resolve();
    this.flushing = this.write().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async write(): Promise<void> {
    const fresh = this.takeBuffered();
    const batch = this.retry ? { chunks: [...this.retry.chunks, ...fresh.chunks], rows: this.retry.rows + fresh.rows } : fresh;
    this.retry = null;
    if (batch.rows === 0) return;
    try {
      await this.sql.begin(async (t) => {
        for (const c of batch.chunks) await t.unsafe(INSERT, [c.toString('utf8')], { prepare: true });
      });
      this.written += batch.rows;
    } catch (e) {
      if (batch.rows + this.pendingRows <= MAX_QUERY_LOG_BUFFER) this.retry = batch;
      else this.dropped += batch.rows;
      this.log?.warn({ err: (e as Error).message, rows: batch.rows, kept: this.retry !== null }, 'query log write to PostgreSQL failed');
      throw isUnavailable(e) ? unavailable(e) : e;
    }
  }

  override async query(text: string, params?: Params): Promise<Row[]> {
    try {
      await this.flush();
      const [q, p] = bindNamed(text, params);
      return (await this.sql.unsafe(q, p as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as Row[];
    } catch (e) {
      throw isUnavailable(e) ? unavailable(e) : e;
    }
  }

  override async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush().catch((err) => this.log?.warn({ err }, 'final query log flush failed'));
    await this.sql.end({ timeout: 5 });
  }
}

function unavailable(e: unknown): SourceUnavailableError {
  return new SourceUnavailableError(
    'the query log database (PostgreSQL) is not reachable; retry shortly',
    { retryAfterMs: 2000, response: { dependency: 'postgres' } },
    { cause: e },
  );
}
