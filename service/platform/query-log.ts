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
import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from '../../lib/log.ts';
import { queryRows, quoteLiteral, type Params, type Row } from '../../lib/warehouse/duckdb.ts';
import { processAlive } from '../../lib/warehouse/lock.ts';
import { formatMs, msLength, uintLength, writeMs, writeUint } from './bytes.ts';

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

/**
 * Rows held in memory at most, buffered or taken by the writer and not yet
 * written (on PostgreSQL: kept while the database is down). Beyond it the
 * newest rows are dropped (the oldest are kept and written first) and counted
 * in `dropped`, which /api/health reports (`query_log`).
 */
export const MAX_QUERY_LOG_BUFFER = 200_000;
/** Bytes per off-heap chunk of encoded lines (about 5,000 lines). */
const CHUNK_BYTES = 1 << 20;

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
const LINE_END = Buffer.from('}\n');

/**
 * The in-memory part both backends share: encoded lines in off-heap chunks
 * (`push`, `pushEncoded`), taken by the backend's writer (`takeBuffered`).
 */
export abstract class QueryLogBuffer {
  /** Encoded lines not yet handed to the writer: filled chunks, then the current chunk up to chunkLen. */
  private full: Buffer[] = [];
  private chunk: Buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private chunkLen = 0;
  protected pendingRows = 0;
  /** Rows the writer has taken from the buffer and not yet written (PostgreSQL: in flight, or kept for a retry). */
  protected heldRows = 0;
  /** Rows dropped because the bound (`maxUnsent`) was reached: the newest, never one already held. */
  dropped = 0;
  /** Rows written to the database so far. */
  written = 0;
  /** Where the log is: a DuckDB file, `:memory:` (fallback), or `postgres`. */
  abstract readonly file: string;

  /** `maxUnsent`: rows held in memory at most (MAX_QUERY_LOG_BUFFER; tests pass a small bound). */
  constructor(readonly maxUnsent: number = MAX_QUERY_LOG_BUFFER) {}

  /** Rows accepted and not yet written to the database (buffered, in flight or kept for a retry). */
  get unsent(): number {
    return this.pendingRows + this.heldRows;
  }
  /** Runs a read query over `query_log` (named `$name` parameters) after writing what is buffered. */
  abstract query(sql: string, params?: Params): Promise<Row[]>;
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
    // A UTF-8 line is at most 3 bytes per UTF-16 unit.
    if (this.chunk.length - this.chunkLen < line.length * 3) this.nextChunk(line.length * 3);
    this.chunkLen += this.chunk.write(line, this.chunkLen);
    this.pendingRows++;
  }

  /**
   * `push` for a client and request whose parts are already encoded
   * (`logClientPart`, `logRequestPart` as UTF-8): the same line, written into
   * the chunk without building a string (the node:http hot path).
   */
  pushEncoded(tsMs: number, clientPart: Uint8Array, requestPart: Uint8Array, durationMs: number): void {
    if (this.pendingRows + this.heldRows >= this.maxUnsent) {
      this.dropped++;
      return;
    }
    const ts = Math.trunc(tsMs);
    const len = TS_OPEN.length + uintLength(ts) + clientPart.length + requestPart.length + msLength(durationMs) + LINE_END.length;
    if (this.chunk.length - this.chunkLen < len) this.nextChunk(len);
    const c = this.chunk;
    let p = this.chunkLen;
    c.set(TS_OPEN, p);
    p = writeUint(c, p + TS_OPEN.length, ts);
    c.set(clientPart, p);
    p += clientPart.length;
    c.set(requestPart, p);
    p = writeMs(c, p + requestPart.length, durationMs);
    c.set(LINE_END, p);
    this.chunkLen = p + LINE_END.length;
    this.pendingRows++;
  }

  /** Hands the filled part of the current chunk to `full` and starts a new chunk of at least `need` bytes. */
  private nextChunk(need: number): void {
    if (this.chunkLen > 0) {
      this.full.push(this.chunk.subarray(0, this.chunkLen));
      this.chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, need));
      this.chunkLen = 0;
    } else if (this.chunk.length < need) {
      this.chunk = Buffer.allocUnsafe(need);
    }
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

/** The embedded query log: a DuckDB file fed through spool files (see the file's header). */
export class QueryLog extends QueryLogBuffer {
  private spool: WriteStream | null = null;
  private spoolRows = 0;
  private seq = 0;
  private flushing: Promise<void> | null = null;
  private spoolTimer: NodeJS.Timeout | null = null;
  private loadTimer: NodeJS.Timeout | null = null;

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
  static async open(file: string, opts: { flushMs?: number; spoolMs?: number; log?: Logger } = {}): Promise<QueryLog> {
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
    // Spool files are per database: the file's own directory, or a per-process one for the in-memory fallback.
    const ownerSpool = `${file}.spool`;
    const spoolDir = where === ':memory:' ? path.join(path.dirname(file), `${FALLBACK_SPOOL}${process.pid}`) : ownerSpool;
    await mkdir(spoolDir, { recursive: true });
    const q = new QueryLog(instance, writer, reader, where, spoolDir, where === ':memory:' ? ownerSpool : null, opts.log);
    if (where !== ':memory:') await q.adoptOrphanSpools();
    await q.loadSpoolFiles(); // left by a crash
    q.spoolTimer = setInterval(() => q.writeBuffer(), opts.spoolMs ?? 250);
    q.spoolTimer.unref();
    // The owner looks for handed-over files even when it has no traffic of its own.
    const force = where !== ':memory:';
    q.loadTimer = setInterval(
      () => void q.flush(force).catch((err) => opts.log?.warn({ err }, 'query log flush failed')),
      opts.flushMs ?? 1000,
    );
    q.loadTimer.unref();
    return q;
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
      stream.on('error', (err) =>
        this.log?.warn({ err: err.message, file: String(stream.path) }, 'query log spool write failed; rows dropped'),
      );
      this.spool = stream;
    }
    for (const c of chunks) this.spool.write(c);
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
      try {
        const res = await this.writer.run(`INSERT INTO query_log
          SELECT * FROM read_json(${quoteLiteral(file)}, format = 'newline_delimited', columns = ${COLUMNS}, ignore_errors = true)
          WHERE ts_ms IS NOT NULL AND client IS NOT NULL AND tier IS NOT NULL AND agent_type IS NOT NULL
            AND method IS NOT NULL AND path IS NOT NULL AND status IS NOT NULL AND duration_ms IS NOT NULL`);
        this.written += Number(res.rowsChanged);
      } catch (err) {
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
