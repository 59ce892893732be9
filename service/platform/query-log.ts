/**
 * The query log: one row per metered /api request, feeding /api/ir/rankings
 * and /api/stats. A request only appends one NDJSON line to an in-memory
 * buffer (O(1), never awaited; encoded into off-heap chunks, so nothing per row
 * is left for the garbage collector). A timer writes the buffer to a spool file
 * next to the database (asynchronous file I/O), and the loader moves each
 * closed spool file into DuckDB with `read_json` (a query that runs on
 * DuckDB's own thread). So nothing per row runs on the event loop beyond
 * building the line: an Appender would make one synchronous native call per
 * value, about 60 ms of blocked event loop per 10,000 rows.
 *
 * Durability: rows still in the memory buffer (at most `spoolMs`) are lost
 * if the process dies; a spool file left by a crash is loaded the next time
 * the log is opened. The log is telemetry, never acknowledged data.
 *
 * One writer per DuckDB file (tech.md §5): a second server process on the
 * same DATA_DIR cannot open it and logs to its own in-memory database instead
 * (with a warning), so its rankings and stats count its own traffic. Each
 * spool file it has loaded is then handed over to the owner's spool folder,
 * and the owner loads it too: the owner's log (and the file, which outlives
 * both) counts every process's requests. The owner also takes over the spool
 * folders that processes which died before handing over left behind.
 *
 * Clients are stored as `key:<key_id>` or `ip:<first 16 hex of SHA-256(ip)>`,
 * never raw IPs.
 */
import { createWriteStream, statSync, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { type ChangeSeen, changedSince, unseen } from '../../lib/file-change.ts';
import type { Logger } from '../../lib/log.ts';
import { queryRows, quoteLiteral, type Params, type Row } from '../../lib/warehouse/duckdb.ts';
import { processAlive } from '../../lib/warehouse/lock.ts';
import { formatMs, msLength, uintLength, writeMs, writeUint } from './bytes.ts';
import { AI_AGENT_TYPES } from './agent-type.ts';

export interface QueryLogEntry {
  /**
   * When the row is logged (its answer is ready), not when the request arrived (that is `ts_ms - duration_ms`):
   * one process's rows then reach the log in `ts_ms` order, so a window ending at a time already past holds every
   * row of that process it will ever hold (the cursor of /api/ir/rankings, `rankCompanies`, relies on it).
   */
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

/**
 * Rows held in memory at most, buffered or taken by the writer and not yet
 * written (on PostgreSQL: kept while the database is down). Beyond it the
 * newest rows are dropped (the oldest are kept and written first) and counted
 * in `dropped`, which /api/health reports (`query_log`).
 */
export const MAX_QUERY_LOG_BUFFER = 200_000;
/** Bytes per off-heap chunk of encoded lines (about 5,000 lines). */
const CHUNK_BYTES = 1 << 20;

/**
 * The rows /api/ir/rankings ranks: successful AI-agent requests about a ticker (`RANKED_FILTER` over `query_log`).
 * Exported for the rankings' SQL (service/stats/stats.queries.ts), which reads them from `query_log` too.
 */
const AI_LIST = AI_AGENT_TYPES.map((t) => `'${t}'`).join(', '); // constants of our own allow-list, never input
export const RANKED_FILTER = `ticker IS NOT NULL AND status = 200 AND agent_type IN (${AI_LIST})`;
const AI_SET = new Set<string>(AI_AGENT_TYPES);
/**
 * The ranked rows counted per hour, ticker, client and agent type (`n` rows, the first at `first_ms`, the latest at
 * `last_ms`), appended with each loaded spool file (a key may have several rows: readers sum them). A ranking reads
 * the window's whole hours from here and only its two partial hours from `query_log` (service/stats/stats.queries.ts,
 * `rankCompanies`). Issue 22: grouping every ranked row of 30 days took ~0.3 s per request at half a million rows.
 */
const AI_HOURLY_COLUMNS = 'hour, ticker, client, agent_type, n, first_ms, last_ms';
const AI_HOURLY_DDL = /* sql */ `CREATE TABLE IF NOT EXISTS query_log_ai_hourly (hour BIGINT NOT NULL, ticker VARCHAR NOT NULL, client VARCHAR NOT NULL, agent_type VARCHAR NOT NULL, n BIGINT NOT NULL, first_ms BIGINT NOT NULL, last_ms BIGINT NOT NULL)`;
/** The hourly counts of the ranked rows of `query_log` that `where` keeps (the columns of query_log_ai_hourly). */
const selectAiHourly = (where: string) =>
  `SELECT ts_ms // 3600000 AS hour, ticker, client, agent_type, count(*) AS n, min(ts_ms) AS first_ms, max(ts_ms) AS last_ms
   FROM query_log WHERE ${where} AND ${RANKED_FILTER} GROUP BY ALL`;
/**
 * The first and last ranked row of each hour that has one (a few rows per hour: one per load that added rows to it;
 * readers take the min and max), rebuilt from query_log_ai_hourly at open. The kept ranking's bounds look up the
 * nearest hour with a ranked row here instead of scanning the counts (service/stats/stats.queries.ts).
 */
const AI_HOURS_DDL = /* sql */ `CREATE TABLE IF NOT EXISTS query_log_ai_hours (hour BIGINT NOT NULL, first_ms BIGINT NOT NULL, last_ms BIGINT NOT NULL)`;
const insertAiHours = (source: string) =>
  `INSERT INTO query_log_ai_hours SELECT hour, min(first_ms), max(last_ms) FROM ${source} GROUP BY hour`;

const COLUMNS = `{ts_ms: 'BIGINT', client: 'VARCHAR', tier: 'VARCHAR', agent_type: 'VARCHAR', method: 'VARCHAR', path: 'VARCHAR', ticker: 'VARCHAR', status: 'INTEGER', duration_ms: 'DOUBLE'}`;

const clientParts = new Map<string, string>();

/** `,"client":…,"tier":…,"agent_type":…,"method":…`: the members of a log line that repeat for every request of a client. */
export function logClientPart(client: string, tier: string, agentType: string, method: string): string {
  return `,"client":${JSON.stringify(client)},"tier":${JSON.stringify(tier)},"agent_type":${JSON.stringify(agentType)},"method":${JSON.stringify(method)}`;
}

/** `,"path":…,"ticker":…,"status":…,"duration_ms":`: the members of a log line fixed by the request and its answer. */
export function logRequestPart(path: string, ticker: string | null, status: number): string {
  return `,"path":${JSON.stringify(path)},"ticker":${ticker === null ? 'null' : JSON.stringify(ticker)},"status":${status | 0},"duration_ms":`;
}

/**
 * A client's members of a log line (`logClientPart`) encoded once as UTF-8, with what the embedded log's counters
 * need of them (the agent type, and whether it is one of the AI agents rankings count): `pushEncoded` decodes
 * nothing per row.
 */
export class EncodedLogClient {
  readonly bytes: Buffer;
  readonly ai: boolean;
  constructor(
    client: string,
    tier: string,
    readonly agentType: string,
    method: string,
  ) {
    this.bytes = Buffer.from(logClientPart(client, tier, agentType, method));
    this.ai = AI_SET.has(agentType);
  }
}

/** A request's members of a log line (`logRequestPart`) encoded once as UTF-8, with its ticker and status. */
export class EncodedLogRequest {
  readonly bytes: Buffer;
  constructor(
    path: string,
    readonly ticker: string | null,
    readonly status: number,
  ) {
    this.bytes = Buffer.from(logRequestPart(path, ticker, status));
  }
}

/**
 * One entry as an NDJSON line: `{"ts_ms":…` + client part + request part +
 * duration (milliseconds, three decimals) + `}`. Strings from the request go
 * through JSON.stringify; the client part is memoised (bounded).
 */
export function toLine(e: QueryLogEntry): string {
  const key = `${e.client}\u0000${e.tier}\u0000${e.agent_type}\u0000${e.method}`;
  let part = clientParts.get(key);
  if (part === undefined) {
    part = logClientPart(e.client, e.tier, e.agent_type, e.method);
    if (clientParts.size >= 10_000) clientParts.clear();
    clientParts.set(key, part);
  }
  return `{"ts_ms":${Math.trunc(e.ts_ms)}${part}${logRequestPart(e.path, e.ticker, e.status)}${formatMs(e.duration_ms)}}\n`;
}

/** Folder prefix (`query-log-spool-<pid>`) of a process logging to memory because another one owns the log file. */
const FALLBACK_SPOOL = 'query-log-spool-';

const TS_OPEN = Buffer.from('{"ts_ms":');

/**
 * The in-memory part both backends share: encoded lines in off-heap chunks
 * (`push`, `pushEncoded`), taken by the backend's writer (`takeBuffered`).
 */
export abstract class QueryLogBuffer {
  /** Encoded lines not yet handed to the writer: filled chunks, then the current chunk up to chunkLen. */
  private full: Buffer[] = [];
  private chunk: Buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private chunkLen = 0;
  /** Whole chunks whose lines the writer has written (`recycleChunk`), used again before a new one is allocated. */
  private spare: Buffer[] = [];
  protected pendingRows = 0;
  /** Rows the writer has taken from the buffer and not yet written (PostgreSQL: in flight, or kept for a retry). */
  protected heldRows = 0;
  /** Rows dropped because the bound (`maxUnsent`) was reached: the newest, never one already held. */
  dropped = 0;
  /** Rows written to the database so far. */
  written = 0;
  /** Where the log is: a DuckDB file, `:memory:` (fallback), or `postgres`. */
  abstract readonly file: string;
  /** The hourly counts of the ranked rows of `query_log` (columns of `query_log_ai_hourly`), when the backend keeps them; else null. */
  readonly rankedHourlyTable: string | null = null;
  /** The first and last ranked row of each hour (columns of `query_log_ai_hours`), with `rankedHourlyTable`; else null. */
  readonly rankedHoursTable: string | null = null;
  /** Whether `accepted` is called for every row taken into the buffer (the embedded log's counters). */
  protected tracksRows = false;
  /** Called for each row taken into the buffer (when `tracksRows`). */
  protected accepted(_tsMs: number, _agentType: string, _ticker: string | null, _status: number): void {}
  /** Called for each row `pushEncoded` takes into the buffer (when `tracksRows`), with its encoded parts. */
  protected acceptedEncoded(_tsMs: number, _client: EncodedLogClient, _request: EncodedLogRequest): void {}

  /** `maxUnsent`: rows held in memory at most (MAX_QUERY_LOG_BUFFER; tests pass a small bound). */
  constructor(readonly maxUnsent: number = MAX_QUERY_LOG_BUFFER) {}

  /** Rows accepted and not yet written to the database (buffered, in flight or kept for a retry). */
  get unsent(): number {
    return this.pendingRows + this.heldRows;
  }
  /** Runs a read query over `query_log` (named `$name` parameters) after writing what is buffered. */
  abstract query(sql: string, params?: Params): Promise<Row[]>;
  /** A GROUP BY query over the ranked rows of `query_log` (the embedded log skips the flush when no ranked row is waiting). */
  queryRanked(sql: string, params?: Params): Promise<Row[]> {
    return this.query(sql, params);
  }
  /**
   * A number that grows whenever ranked rows are added to `query_log` (after `syncRanked`, every ranked row accepted so
   * far is in it), or null when the backend cannot tell (then nothing may be kept from one ranking to the next).
   */
  get rankedVersion(): number | null {
    return null;
  }
  /** Makes every ranked row accepted so far readable from `query_log` (the flush `queryRanked` does first). */
  syncRanked(): Promise<void> {
    return this.flush();
  }
  /**
   * Rows with `ts_ms >= sinceMs` by agent type, as `SELECT agent_type, count(*) ... GROUP BY agent_type` over the
   * log would count them after a flush, or null when the log cannot tell without that query (then run it).
   */
  agentCounts(_sinceMs: number): Promise<Map<string, number> | null> {
    return Promise.resolve(null);
  }
  /** Writes what is buffered. */
  abstract flush(): Promise<void>;
  abstract close(): Promise<void>;
  /**
   * Queues one entry (synchronous): its line is encoded straight into an
   * off-heap chunk. Holding the lines as strings until the spool timer made
   * every one survive a scavenge and get promoted, and joining them flattened
   * each: about 4 µs a request on this machine, mostly garbage collection.
   */
  push(e: QueryLogEntry): void {
    if (this.pendingRows + this.heldRows >= this.maxUnsent) {
      this.dropped++;
      return;
    }
    const line = toLine(e);
    if (this.tracksRows) this.accepted(e.ts_ms, e.agent_type, e.ticker, e.status);
    // A UTF-8 line is at most 3 bytes per UTF-16 unit.
    if (this.chunk.length - this.chunkLen < line.length * 3) this.nextChunk(line.length * 3);
    this.chunkLen += this.chunk.write(line, this.chunkLen);
    this.pendingRows++;
  }

  /**
   * `push` for a client and request whose parts are already encoded
   * (`EncodedLogClient`, `EncodedLogRequest`): the same line, written into
   * the chunk without building a string (the node:http hot path).
   */
  pushEncoded(tsMs: number, client: EncodedLogClient, request: EncodedLogRequest, durationMs: number): void {
    if (this.pendingRows + this.heldRows >= this.maxUnsent) {
      this.dropped++;
      return;
    }
    const ts = Math.trunc(tsMs);
    if (this.tracksRows) this.acceptedEncoded(ts, client, request);
    const clientPart = client.bytes;
    const requestPart = request.bytes;
    const len = TS_OPEN.length + uintLength(ts) + clientPart.length + requestPart.length + msLength(durationMs) + 2;
    if (this.chunk.length - this.chunkLen < len) this.nextChunk(len);
    const c = this.chunk;
    let p = this.chunkLen;
    c.set(TS_OPEN, p);
    p = writeUint(c, p + TS_OPEN.length, ts);
    c.set(clientPart, p);
    p += clientPart.length;
    c.set(requestPart, p);
    p = writeMs(c, p + requestPart.length, durationMs);
    c[p] = 125; // }
    c[p + 1] = 10; // \n
    this.chunkLen = p + 2;
    this.pendingRows++;
  }

  /** Hands the filled part of the current chunk to `full` and starts a new chunk of at least `need` bytes. */
  private nextChunk(need: number): void {
    if (this.chunkLen > 0) {
      this.full.push(this.chunk.subarray(0, this.chunkLen));
      this.chunk = (need <= CHUNK_BYTES ? this.spare.pop() : undefined) ?? Buffer.allocUnsafe(Math.max(CHUNK_BYTES, need));
      this.chunkLen = 0;
    } else if (this.chunk.length < need) {
      this.chunk = Buffer.allocUnsafe(need);
    }
  }

  /**
   * Gives back a chunk `takeBuffered` handed out, once the writer has written its lines and keeps no reference to
   * it: the next chunk reuses its memory. Issue 22: a new 1 MB chunk every 250 ms (or sooner under load) was memory
   * outside V8's heap at about 200 bytes a request, which counts towards V8's mark-compact trigger (docs/architecture.md,
   * "No off-heap memory per answer"). Only whole chunks are kept, at most four.
   */
  protected recycleChunk(part: Buffer): void {
    const ab = part.buffer;
    if (part.byteOffset !== 0 || ab.byteLength !== CHUNK_BYTES || this.spare.length >= 4) return;
    const whole = Buffer.from(ab, 0, CHUNK_BYTES);
    if (whole.buffer === this.chunk.buffer || this.spare.some((b) => b.buffer === ab)) return;
    this.spare.push(whole);
  }

  /** Hands over the buffered lines (whole lines, NDJSON) and their count, leaving the buffer empty. */
  protected takeBuffered(): { chunks: Buffer[]; rows: number } {
    this.nextChunk(0);
    const out = { chunks: this.full, rows: this.pendingRows };
    this.full = [];
    this.pendingRows = 0;
    return out;
  }
}

/**
 * The embedded log's load timer loads this process's spooled rows once this many wait (two DuckDB row groups of
 * 122,880 rows: a large append writes whole row groups), or once the oldest has waited LOAD_MAX_WAIT_MS.
 */
export const LOAD_BATCH_ROWS = 245_760;
export const LOAD_MAX_WAIT_MS = 60_000;

/** Minutes (ts_ms // 60,000) kept by the counters of /api/stats beyond the oldest one asked for. */
const MINUTES_SLACK = 60;

/**
 * The embedded query log: a DuckDB file fed through spool files (see the file's header).
 *
 * Counters (issue 22: /api/stats flushed the log and aggregated a day of it on every request): rows by minute and
 * agent type since the log was opened (minus 25 hours), maintained as rows are taken into the buffer (this
 * process's) or loaded from a handed-over spool file (another process's). A count since `t` sums the whole minutes
 * after `t`'s minute, plus `t`'s own minute to the millisecond from the database (read once per minute, after a
 * flush; dropped when a row of that minute arrives). Anything that could make them differ from the table (a spool
 * file that failed to write or load) turns them off: the query answers again. /api/ir/rankings reads the hourly
 * counts of the ranked rows (`query_log_ai_hourly`), written with each spool file in the same transaction, and the
 * ranked rows of `query_log` of its window's two partial hours.
 */
export class QueryLog extends QueryLogBuffer {
  override readonly rankedHourlyTable = 'query_log_ai_hourly';
  override readonly rankedHoursTable = 'query_log_ai_hours';
  protected override tracksRows = true;
  /** Rows by minute and agent type; null before they are built and once a row may have been lost. */
  private minutes: Map<number, Map<string, number>> | null = null;
  private horizonMinute = Number.POSITIVE_INFINITY;
  /** One minute's rows to the millisecond (the minute a count starts in), from the database. */
  private boundary: { minute: number; rows: Array<{ ts: number; agent: string; n: number }> } | null = null;
  private boundaryGen = 0;
  private boundaryLoad: { minute: number; gen: number; rows: Promise<Array<{ ts: number; agent: string; n: number }>> } | null = null;
  /** Rows `acceptedEncoded` counted and not yet folded into `minutes`: all of minute `runMinute` and agent type `runAgent`. */
  private runMinute = Number.NaN;
  private runAgent = '';
  private runCount = 0;
  /** Ranked rows taken into the buffer, and how many of those are in the database for sure. */
  private rankedAccepted = 0;
  private rankedLoaded = 0;
  /** Ranked rows in query_log (counted at open, then per loaded file). */
  private rankedInTable = 0;
  private spool: WriteStream | null = null;
  private spoolRows = 0;
  private seq = 0;
  private flushing: Promise<void> | null = null;
  private spoolTimer: NodeJS.Timeout | null = null;
  /** The spool folder's change time when it was last listed for handed-over files, and when that was (`Date.now()`): by readers, by the load timer. */
  private readonly readerListing = unseen();
  private readonly timerListing = unseen();
  private loadTimer: NodeJS.Timeout | null = null;
  /** Rows of this process waiting (buffered or spooled) that make the load timer load them (`loadTick`). */
  private loadRows = LOAD_BATCH_ROWS;
  /** How long the oldest waiting row may wait for the load timer (`loadTick`). */
  private loadMaxWaitMs = LOAD_MAX_WAIT_MS;
  /** When the load timer first saw rows of this process waiting (0: none waiting). */
  private waitingSince = 0;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    private readonly reader: DuckDBConnection,
    readonly file: string,
    private readonly spoolDir: string,
    /** The owner's spool folder, where this (in-memory fallback) log hands its loaded spool files; null for the owner. */
    private readonly handoffDir: string | null,
    private readonly log?: Logger,
  ) {
    super();
  }

  /** Opens (creating) the log database at `file`; falls back to an in-memory database when the file is locked by another process. */
  static async open(
    file: string,
    opts: { flushMs?: number; spoolMs?: number; loadRows?: number; loadMaxWaitMs?: number; log?: Logger } = {},
  ): Promise<QueryLog> {
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
    // A log written before 2026-11-27 kept a copy of its ranked rows (`query_log_ai`), now read from query_log itself,
    // and hourly counts without `first_ms`: the copy is dropped, the counts rebuilt below.
    await writer.run('DROP TABLE IF EXISTS query_log_ai');
    const [hourlyShape] = await queryRows(
      writer,
      `SELECT count(*)::INTEGER AS tables, count(*) FILTER (WHERE column_name = 'first_ms')::INTEGER AS first_ms
       FROM duckdb_columns() WHERE table_name = 'query_log_ai_hourly' AND schema_name = 'main'`,
    );
    if (Number(hourlyShape?.tables) > 0 && Number(hourlyShape?.first_ms) === 0) await writer.run('DROP TABLE query_log_ai_hourly');
    await writer.run(AI_HOURLY_DDL);
    await writer.run(AI_HOURS_DDL);
    // query_log_ai_hourly counts exactly the ranked rows of query_log: it is rebuilt when it does not (a log written
    // before it existed; both are written in each load's transaction).
    const [sync] = await queryRows(
      writer,
      `SELECT (SELECT count(*) FROM query_log WHERE ${RANKED_FILTER})::BIGINT AS want,
         (SELECT coalesce(sum(n), 0) FROM query_log_ai_hourly)::BIGINT AS hourly`,
    );
    if (String(sync?.want) !== String(sync?.hourly)) {
      await writer.run('BEGIN TRANSACTION');
      await writer.run('DELETE FROM query_log_ai_hourly');
      await writer.run(`INSERT INTO query_log_ai_hourly (${AI_HOURLY_COLUMNS}) ${selectAiHourly('true')}`);
      await writer.run('COMMIT');
    }
    await writer.run('BEGIN TRANSACTION');
    await writer.run('DELETE FROM query_log_ai_hours');
    await writer.run(insertAiHours('query_log_ai_hourly'));
    await writer.run('COMMIT');
    const rankedAtOpen = Number(sync?.want ?? 0);
    const reader = await instance.connect();
    // Spool files are per database: the file's own directory, or a per-process one for the in-memory fallback.
    const ownerSpool = `${file}.spool`;
    const spoolDir = where === ':memory:' ? path.join(path.dirname(file), `${FALLBACK_SPOOL}${process.pid}`) : ownerSpool;
    await mkdir(spoolDir, { recursive: true });
    const q = new QueryLog(instance, writer, reader, where, spoolDir, where === ':memory:' ? ownerSpool : null, opts.log);
    q.rankedInTable = rankedAtOpen;
    if (where !== ':memory:') await q.adoptOrphanSpools();
    await q.loadSpoolFiles(); // left by a crash
    await q.startCounters();
    q.spoolTimer = setInterval(() => q.writeBuffer(), opts.spoolMs ?? 250);
    q.spoolTimer.unref();
    q.loadRows = opts.loadRows ?? LOAD_BATCH_ROWS;
    q.loadMaxWaitMs = opts.loadMaxWaitMs ?? LOAD_MAX_WAIT_MS;
    q.loadTimer = setInterval(
      () => void q.loadTick().catch((err) => opts.log?.warn({ err }, 'query log flush failed')),
      opts.flushMs ?? 1000,
    );
    q.loadTimer.unref();
    return q;
  }

  /**
   * The load timer's tick (the owner's): loads the spooled rows into the database once `loadRows` of this process's
   * rows wait, or the oldest of them has waited `loadMaxWaitMs`, or as soon as another process has handed a file over. Loading in large batches costs DuckDB far less per row than a load a second (issue 22 item 5, measured in
   * docs/benchmarks-history.md). Nothing waits on it: every read of the log (`query`, `queryRanked`, `agentCounts`) flushes
   * first, and the rows are on disk in the spool file after `spoolMs` either way, so neither the answers nor what
   * survives a crash change.
   */
  private loadTick(): Promise<void> {
    // A fallback log loads (and hands over) at every tick as before: the owner's rankings and stats wait for its files.
    if (this.handoffDir !== null) return this.flush();
    const waiting = this.pendingRows + this.spoolRows;
    const now = Date.now();
    if (waiting === 0) this.waitingSince = 0;
    else if (this.waitingSince === 0) this.waitingSince = now;
    if (waiting > 0 && (waiting >= this.loadRows || now - this.waitingSince >= this.loadMaxWaitMs))
      return this.flush(true).then(() => {
        // Rows that came during the load are younger than its start.
        this.waitingSince = this.pendingRows + this.spoolRows > 0 ? now : 0;
      });
    // Handed-over files are looked for even without traffic of this process's own (a stat of the folder, a listing when it changed).
    return this.handedOverSince(this.timerListing).then((handed) => (handed ? this.flush(true) : undefined));
  }

  /** Moves the memory buffer to the open spool file (asynchronous write). */
  private writeBuffer(): void {
    if (this.pendingRows === 0) return;
    const { chunks, rows } = this.takeBuffered();
    if (!this.spool) {
      // Time first (files load oldest first), then the process, so handed-over files never collide with the owner's.
      const stream = createWriteStream(
        path.join(this.spoolDir, `${Date.now()}-${process.pid}-${String(this.seq++).padStart(6, '0')}.ndjson.open`),
      );
      // A failed write (disk full, folder removed) loses these log rows, never the server: an 'error' without a listener would throw.
      stream.on('error', (err) => {
        this.minutes = null; // counted rows that will never be in the table
        this.log?.warn({ err: err.message, file: String(stream.path) }, 'query log spool write failed; rows dropped');
      });
      this.spool = stream;
    }
    // Each chunk is given back once the file has its bytes (the write's callback, called after fs.write(v) returned);
    // a failed write keeps it out of use.
    for (const c of chunks) this.spool.write(c, (err) => (err ? undefined : this.recycleChunk(c)));
    this.spoolRows += rows;
  }

  /**
   * Writes buffered rows and loads every closed spool file into the database;
   * concurrent callers share one flush. Without rows of its own it does
   * nothing unless `force` (the owner then still loads handed-over files).
   */
  override flush(force = false): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.pendingRows || this.spoolRows ? this.flush() : undefined));
    if (this.pendingRows === 0 && this.spoolRows === 0 && !force) return Promise.resolve();
    this.flushing = this.doFlush().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    const ranked = this.rankedAccepted; // every row taken so far goes into this flush's files
    this.writeBuffer();
    const stream = this.spool;
    if (stream) {
      this.spool = null;
      this.spoolRows = 0;
      stream.end();
      const ok = await finished(stream).then(
        () => true,
        () => false,
      );
      const open = String(stream.path);
      if (ok) await rename(open, open.replace(/\.open$/, ''));
    }
    await this.loadSpoolFiles();
    this.rankedLoaded = Math.max(this.rankedLoaded, ranked);
  }

  /** Loads closed spool files (oldest first) with read_json, deleting each once it is in the database. */
  private async loadSpoolFiles(): Promise<void> {
    const files = (await readdir(this.spoolDir).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.ndjson') || f.endsWith('.ndjson.open'))
      .sort();
    for (const f of files) {
      let file = path.join(this.spoolDir, f);
      if (f.endsWith('.open')) {
        // Only at open time can an `.open` file be here without a live stream: a crash left it.
        if (this.spool && String(this.spool.path) === file) continue;
        await rename(file, file.replace(/\.open$/, ''));
        file = file.replace(/\.open$/, '');
      }
      // ignore_errors: a line cut short by a crash reads as NULLs and is filtered out, never fatal.
      const src = `read_json(${quoteLiteral(file)}, format = 'newline_delimited', columns = ${COLUMNS}, ignore_errors = true)
          WHERE ts_ms IS NOT NULL AND client IS NOT NULL AND tier IS NOT NULL AND agent_type IS NOT NULL
            AND method IS NOT NULL AND path IS NOT NULL AND status IS NOT NULL AND duration_ms IS NOT NULL`;
      // Another process's file (handed over): its rows were not counted when taken (this process's were).
      const foreign = path.basename(file).split('-')[1] !== String(process.pid);
      try {
        await this.writer.run('BEGIN TRANSACTION');
        try {
          // The file is parsed once, straight into query_log; the hourly counts and a handed-over file's minutes read
          // the rows this transaction appended from there. query_log is append-only (nothing deletes from it), so its
          // committed rows' row ids are 0 to count - 1 and the appended rows are those at or after that count. Issue 22
          // item 5: a temporary table both inserts read, and a second table with a copy of the ranked rows, made a
          // hot-path row cost 3.2 µs of DuckDB CPU instead of 2.2 (measured alone, docs/benchmarks.md).
          const [counts] = await queryRows(this.writer, 'SELECT count(*)::BIGINT AS n FROM query_log');
          const appended = { first: Number(counts?.n ?? 0) };
          const res = await this.writer.run(`INSERT INTO query_log SELECT * FROM ${src}`);
          let ranked = 0;
          if (Number(res.rowsChanged) > 0) {
            // The counts of this load's ranked rows (a few per hour, ticker and client, not one per row), then their hours.
            await queryRows(this.writer, `CREATE OR REPLACE TEMP TABLE load_hourly AS ${selectAiHourly('rowid >= $first')}`, appended);
            const [sum] = await queryRows(this.writer, 'SELECT coalesce(sum(n), 0)::BIGINT AS n FROM load_hourly');
            ranked = Number(sum?.n ?? 0);
            if (ranked > 0) {
              await this.writer.run(`INSERT INTO query_log_ai_hourly (${AI_HOURLY_COLUMNS}) SELECT ${AI_HOURLY_COLUMNS} FROM load_hourly`);
              await this.writer.run(insertAiHours('load_hourly'));
            }
            await this.writer.run('DROP TABLE load_hourly');
          }
          const counted =
            foreign && this.minutes
              ? await queryRows(
                  this.writer,
                  `SELECT (ts_ms // 60000)::BIGINT AS m, agent_type, count(*)::INTEGER AS n FROM query_log WHERE rowid >= $first GROUP BY ALL`,
                  appended,
                )
              : [];
          await this.writer.run('COMMIT');
          this.written += Number(res.rowsChanged);
          this.rankedInTable += ranked;
          for (const r of counted) this.countRow(Number(r.m), String(r.agent_type), Number(r.n));
        } catch (err) {
          await this.writer.run('ROLLBACK').catch(() => undefined);
          throw err;
        }
      } catch (err) {
        if (!foreign) this.minutes = null; // counted rows that are not in the table
        // Keep the file for inspection instead of retrying it forever (the log is telemetry: never block the server on it).
        this.log?.warn({ err: (err as Error).message, file }, 'query log spool file could not be loaded; kept as .bad');
        await rename(file, `${file}.bad`).catch(() => undefined);
        continue;
      }
      // A fallback log hands the file to the owner (same folder tree, so a rename); the owner deletes it.
      if (
        this.handoffDir === null ||
        !(await rename(file, path.join(this.handoffDir, path.basename(file))).then(
          () => true,
          () => false,
        ))
      )
        await rm(file, { force: true });
    }
  }

  /**
   * Moves into the owner's spool folder the files of fallback spool folders
   * whose process is gone (it died before handing them over), and removes
   * those folders. Called by the owner when it opens the log.
   */
  private async adoptOrphanSpools(): Promise<void> {
    const parent = path.dirname(this.spoolDir);
    for (const d of await readdir(parent).catch(() => [] as string[])) {
      const pid = d.startsWith(FALLBACK_SPOOL) ? Number(d.slice(FALLBACK_SPOOL.length)) : NaN;
      if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
      const dir = path.join(parent, d);
      for (const f of await readdir(dir).catch(() => [] as string[])) {
        if (f.endsWith('.ndjson') || f.endsWith('.ndjson.open'))
          await rename(path.join(dir, f), path.join(this.spoolDir, f.replace(/\.open$/, ''))).catch(() => undefined);
      }
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** Builds the counters from the table (at open, before any row can be pushed). */
  private async startCounters(): Promise<void> {
    const horizon = Math.floor((Date.now() - 25 * 3600_000) / 60_000);
    const rows = await queryRows(
      this.writer,
      `SELECT (ts_ms // 60000)::BIGINT AS m, agent_type, count(*)::INTEGER AS n FROM query_log WHERE ts_ms >= $h GROUP BY ALL`,
      { h: horizon * 60_000 },
    );
    this.minutes = new Map();
    this.horizonMinute = horizon;
    for (const r of rows) this.countRow(Number(r.m), String(r.agent_type), Number(r.n));
  }

  protected override accepted(tsMs: number, agentType: string, ticker: string | null, status: number): void {
    if (ticker !== null && status === 200 && AI_SET.has(agentType)) this.rankedAccepted++;
    if (this.minutes) this.countRow(Math.floor(tsMs / 60_000), agentType, 1);
  }

  /**
   * The hot path's rows: a run of rows of one minute and one agent type is counted as one number (`runCount`) and
   * folded into `minutes` when the run ends or before anything reads the counters (`foldRun`), instead of two Map
   * lookups a row.
   */
  protected override acceptedEncoded(tsMs: number, client: EncodedLogClient, request: EncodedLogRequest): void {
    if (client.ai && request.ticker !== null && request.status === 200) this.rankedAccepted++;
    const minute = Math.floor(tsMs / 60_000);
    if (minute === this.runMinute && client.agentType === this.runAgent) this.runCount++;
    else {
      this.foldRun();
      this.runMinute = minute;
      this.runAgent = client.agentType;
      this.runCount = 1;
    }
  }

  /** Counts the pending run of `acceptedEncoded` into `minutes` (with countRow's invalidation of the boundary minute). */
  private foldRun(): void {
    if (this.runCount === 0) return;
    const n = this.runCount;
    this.runCount = 0;
    this.countRow(this.runMinute, this.runAgent, n);
  }

  private countRow(minute: number, agent: string, n: number): void {
    if (!this.minutes) return;
    let m = this.minutes.get(minute);
    if (!m) this.minutes.set(minute, (m = new Map()));
    m.set(agent, (m.get(agent) ?? 0) + n);
    // A row of the minute held (or being read) to the millisecond: that minute must be read again.
    if (this.boundary && minute <= this.boundary.minute) this.boundary = null;
    if (this.boundaryLoad && minute <= this.boundaryLoad.minute) this.boundaryGen++;
  }

  /** Whether another process has handed over a spool file not loaded yet (the owner only). */
  private hasHandedOverFiles(): Promise<boolean> {
    return this.handedOverSince(this.readerListing);
  }

  /**
   * Whether another process has handed over a spool file not loaded yet (the owner only), listing the folder only
   * when it changed since the listing `seen` records (readers and the load timer keep one each, so that one's
   * listing never hides a file from the other).
   */
  private async handedOverSince(seen: ChangeSeen): Promise<boolean> {
    if (this.handoffDir !== null) return false;
    // Listed only when the folder changed since the last listing (a file added or renamed into it changes its mtime).
    let st: { mtimeMs: number; ctimeMs: number };
    try {
      st = statSync(this.spoolDir);
    } catch {
      return false; // no folder: nothing handed over
    }
    if (!changedSince(seen, st)) return false;
    const own = `-${process.pid}-`;
    return (await readdir(this.spoolDir).catch(() => [] as string[])).some((f) => f.endsWith('.ndjson') && !f.includes(own));
  }

  /** One minute's rows to the millisecond, by agent type, from the table after a flush (shared by concurrent callers). */
  private loadBoundary(minute: number): Promise<Array<{ ts: number; agent: string; n: number }>> {
    this.foldRun();
    const gen = this.boundaryGen;
    if (this.boundaryLoad && this.boundaryLoad.minute === minute && this.boundaryLoad.gen === gen) return this.boundaryLoad.rows;
    const rows = this.flush()
      .then(() =>
        queryRows(
          this.reader,
          `SELECT ts_ms, agent_type, count(*)::INTEGER AS n FROM query_log WHERE ts_ms >= $a AND ts_ms < $b GROUP BY ALL`,
          { a: minute * 60_000, b: (minute + 1) * 60_000 },
        ),
      )
      .then((rs) => {
        const out = rs.map((r) => ({ ts: Number(r.ts_ms), agent: String(r.agent_type), n: Number(r.n) }));
        // Kept unless a row of that minute arrived meanwhile (this answer stands: it was asked before that row).
        this.foldRun();
        if (this.boundaryGen === gen) this.boundary = { minute, rows: out };
        return out;
      });
    this.boundaryLoad = { minute, gen, rows };
    rows
      .finally(() => {
        if (this.boundaryLoad?.rows === rows) this.boundaryLoad = null;
      })
      .catch(() => undefined);
    return rows;
  }

  override async agentCounts(sinceMs: number): Promise<Map<string, number> | null> {
    if (!this.minutes || sinceMs < this.horizonMinute * 60_000) return null;
    if (await this.hasHandedOverFiles()) await this.flush(true);
    const m0 = Math.floor(sinceMs / 60_000);
    this.foldRun();
    const edge = this.boundary?.minute === m0 ? this.boundary.rows : await this.loadBoundary(m0);
    this.foldRun();
    const minutes = this.minutes;
    if (!minutes) return null;
    const out = new Map<string, number>();
    for (const [m, agents] of minutes) if (m > m0) for (const [a, n] of agents) out.set(a, (out.get(a) ?? 0) + n);
    for (const r of edge) if (r.ts >= sinceMs) out.set(r.agent, (out.get(r.agent) ?? 0) + r.n);
    // Minutes long before any count asked for are dropped (a count starting before them queries the table).
    if (minutes.size > 24 * 60 + 2 * MINUTES_SLACK) {
      const keep = m0 - MINUTES_SLACK;
      for (const m of minutes.keys()) if (m < keep) minutes.delete(m);
      this.horizonMinute = Math.max(this.horizonMinute, keep);
    }
    return out;
  }

  /**
   * `query` over the ranked rows, flushing first only when a ranked row of this process (or a handed-over file) is not
   * in query_log yet; no rows without asking when there is none (the ranking groups by ticker: no row, no group).
   */
  override async queryRanked(sql: string, params?: Params): Promise<Row[]> {
    await this.syncRanked();
    if (this.rankedInTable === 0) return [];
    return queryRows(this.reader, sql, params);
  }

  /** The ranked rows in query_log: nothing deletes from it, so the count grows with every load adding ranked rows. */
  override get rankedVersion(): number {
    return this.rankedInTable;
  }

  /** Flushes only when a ranked row of this process (or a handed-over file) is not in query_log yet. */
  override async syncRanked(): Promise<void> {
    if (this.rankedAccepted > this.rankedLoaded || (await this.hasHandedOverFiles())) await this.flush(this.handoffDir === null);
  }

  /** Runs a read query over `query_log` after flushing what is buffered (and, on the owner, loading handed-over files). */
  override async query(sql: string, params?: Params): Promise<Row[]> {
    await this.flush(this.handoffDir === null);
    return queryRows(this.reader, sql, params);
  }

  override async close(): Promise<void> {
    if (this.spoolTimer) clearInterval(this.spoolTimer);
    if (this.loadTimer) clearInterval(this.loadTimer);
    await this.flush().catch((err) => this.log?.warn({ err }, 'final query log flush failed'));
    // A fallback log's folder is empty once everything is handed over (rmdir refuses otherwise: the owner adopts it later).
    if (this.handoffDir !== null) await rmdir(this.spoolDir).catch(() => undefined);
    this.writer.closeSync();
    this.reader.closeSync();
    this.instance.closeSync();
  }
}
