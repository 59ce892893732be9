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
 * log rows, never state).
 *
 * While PostgreSQL is unreachable the rows are kept and sent again, oldest
 * first, when it is back (the batch a failed write took, then everything
 * buffered since); reads (rankings, stats) answer 503 with Retry-After.
 * At most `maxUnsent` rows (MAX_QUERY_LOG_BUFFER, 200,000) are held: beyond
 * that the newest are dropped and counted (`dropped`, /api/health
 * `query_log`). Exactly once: each write sends a numbered batch of this writer
 * (a random id per process), and its transaction records the number in
 * `query_log_writers` (migration 0006) under that row's lock; a batch whose
 * COMMIT went unacknowledged (the connection dropped) is sent again with its
 * number and skipped if it was committed after all.
 */
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { SourceUnavailableError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { loadSql, type Params, type Row } from '../../lib/warehouse/duckdb.ts';
import { bindNamed } from './named-params.ts';
import { MAX_QUERY_LOG_BUFFER, QueryLogBuffer } from './query-log.ts';
import { connectMigrated, isUnavailable } from './state.postgres.ts';

const INSERT = loadSql('./query-log-insert.postgres.sql', import.meta.url);
const MARK = loadSql('./query-log-writer-mark.postgres.sql', import.meta.url);
const ADVANCE = loadSql('./query-log-writer-advance.postgres.sql', import.meta.url);
const PRUNE = loadSql('./query-log-writers-prune.postgres.sql', import.meta.url);

/** One flush's rows, numbered per writer (1, 2, 3…): a retry sends the same number, so a committed batch is skipped. */
interface Batch {
  seq: number;
  chunks: Buffer[];
  rows: number;
}

type Sql = postgres.Sql<Record<string, never>>;

export class PgQueryLog extends QueryLogBuffer {
  readonly file = 'postgres';
  /** This writer's id in `query_log_writers`: one per process start. */
  readonly writerId = randomUUID();
  /** The batch a failed write left, sent again (with its number) before newer rows. */
  private retry: Batch | null = null;
  private nextSeq = 1;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** `dropped` as last logged: a warning names the rows dropped since. */
  private droppedLogged = 0;

  private constructor(
    private readonly sql: Sql,
    maxUnsent: number,
    private readonly log?: Logger,
  ) {
    super(maxUnsent);
  }

  /**
   * Connects (two connections), applies pending migrations, and starts the flush timer. Throws when PostgreSQL
   * cannot be reached. `maxUnsent`: rows held in memory at most (MAX_QUERY_LOG_BUFFER).
   */
  static async open(url: string, opts: { flushMs?: number; log?: Logger; maxUnsent?: number } = {}): Promise<PgQueryLog> {
    const sql = await connectMigrated(url, {
      max: 2,
      connect_timeout: 5,
      connection: { application_name: 'proofline-query-log', synchronous_commit: 'off' },
    });
    await sql.unsafe(PRUNE);
    const q = new PgQueryLog(sql, opts.maxUnsent ?? MAX_QUERY_LOG_BUFFER, opts.log);
    // A failed write has been logged (and its rows kept) by write(): nothing more to say here.
    q.timer = setInterval(() => void q.flush().catch(() => undefined), opts.flushMs ?? 1000);
    q.timer.unref();
    return q;
  }

  /** Writes the rows kept by a failed write and the buffered ones; concurrent callers share one write. */
  override flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.pendingRows ? this.flush() : undefined));
    if (this.pendingRows === 0 && this.retry === null) return Promise.resolve();
    this.flushing = this.write().finally(() => (this.flushing = null));
    return this.flushing;
  }

  /**
   * Writes the batch a failed write left (if any), then the rows buffered now as the next batch: one transaction
   * each. While a batch is unwritten, newer rows stay in the buffer (one batch to retry, however long the outage).
   */
  private async write(): Promise<void> {
    this.reportDropped();
    for (let round = 0; round < 2; round++) {
      if (this.retry === null) {
        if (this.pendingRows === 0) return;
        this.retry = { seq: this.nextSeq++, ...this.takeBuffered() };
        // Taken rows still count against the bound until they are written (push drops the newest beyond it).
        this.heldRows = this.retry.rows;
      }
      const b = this.retry;
      try {
        await this.sql.begin(async (t) => {
          const [mark] = await t.unsafe(MARK, [this.writerId], { prepare: true });
          // Numbered at most `last_batch`: committed by a write whose answer was lost. Never twice.
          if (b.seq <= Number(mark!.last_batch)) return;
          for (const c of b.chunks) await t.unsafe(INSERT, [c.toString('utf8')], { prepare: true });
          await t.unsafe(ADVANCE, [this.writerId, b.seq], { prepare: true });
        });
      } catch (e) {
        this.log?.warn(
          { err: (e as Error).message, rows: b.rows, buffered: this.pendingRows },
          'query log write to PostgreSQL failed; rows kept for the next flush',
        );
        throw isUnavailable(e) ? unavailable(e) : e;
      }
      this.written += b.rows;
      this.heldRows = 0;
      this.retry = null;
    }
  }

  /** Logs how many rows the bound dropped since the last warning (push itself never logs: it is the request path). */
  private reportDropped(): void {
    if (this.dropped === this.droppedLogged) return;
    this.log?.warn(
      { dropped: this.dropped - this.droppedLogged, dropped_total: this.dropped, max_unsent: this.maxUnsent },
      'query log: rows dropped while PostgreSQL was unreachable (the newest beyond the bound)',
    );
    this.droppedLogged = this.dropped;
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
