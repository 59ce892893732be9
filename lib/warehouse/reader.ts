/**
 * Read side of a domain: a pool of read-only connections to the current
 * snapshot's `serving.duckdb`. It polls the CURRENT pointer and, when a new
 * snapshot is published, opens it, swaps atomically for new queries and closes
 * the old pool once its in-flight queries finish. Listeners (response caches)
 * are told on every swap so they can drop what they built from the old one.
 *
 * Parquet-only tables (manifest `storage: 'parquet'`) are not in
 * serving.duckdb: every pooled connection gets a connection-local TEMP VIEW of
 * the same name over the snapshot's parquet file(s), built at open time from
 * the snapshot's final directory (the publisher renames it after building, so
 * no path can be stored inside serving.duckdb). Packed record stores listed in
 * the manifest are opened with the snapshot (index in memory) and closed when
 * the reader swaps away from it.
 *
 * Before a new snapshot is swapped in, the hooks registered with `beforeSwap`
 * run with it staged: inside their async scope (and only there) this reader
 * answers from the new snapshot, while every other caller still reads the old
 * one. The API warms the new snapshot's pool this way (service/main.ts), so no
 * client request is the first on it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SourceUnavailableError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { ConnectionPool, openDatabase, quoteIdentifier, quoteLiteral, type Params, type Row } from './duckdb.ts';
import { snapshotDir } from './layout.ts';
import { PackedStore } from './packed-store.ts';
import { readCurrentPointer, tableFilePaths, type SnapshotManifest } from './snapshot.ts';

export interface ReaderOptions {
  poolSize?: number;
  memoryLimit?: string;
  /** 0 disables polling (tests call `refresh()`). */
  pollMs?: number;
  /** Where a failed background refresh is reported (it is retried on the next poll, never swallowed). */
  log?: Pick<Logger, 'warn'>;
}

interface Active {
  manifest: SnapshotManifest;
  dir: string;
  pool: ConnectionPool;
  packed: Map<string, PackedStore>;
}

/** CREATE TEMP VIEW statements for the parquet-only tables of a snapshot (absolute paths under `dir`). */
export function parquetViewsSql(dir: string, manifest: SnapshotManifest): string[] {
  return Object.entries(manifest.tables)
    .filter(([, tm]) => tm.storage === 'parquet')
    .map(
      ([t, tm]) =>
        `CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(t)} AS SELECT * FROM read_parquet([${tableFilePaths(dir, t, tm).map(quoteLiteral).join(', ')}])`,
    );
}

/**
 * The snapshots staged for a `beforeSwap` hook, by reader: a query made in the hook's async scope reads its
 * reader's staged snapshot; outside it (every client request) the active one.
 */
const stagedScope = new AsyncLocalStorage<ReadonlyMap<SnapshotReader, Active>>();

/** The file paths of a snapshot's parquet table, by its manifest entry (tableFiles). */
const tableFilesOf = new WeakMap<SnapshotManifest['tables'][string], readonly string[]>();
/**
 * Swaps whose hooks are running. When none is, the scope is disabled: on Node 20 an enabled AsyncLocalStorage
 * installs promise hooks for the whole process, which doubled the cost of an `await` here (measured: 3 M awaits
 * 527 ms, 1,061 ms enabled, 643 ms after `disable()`), and the read path awaits on every request.
 */
let stagings = 0;

/** A hook run before a swap, with the new snapshot staged (see the module comment). */
export type BeforeSwapHook = (manifest: SnapshotManifest, domain: string) => Promise<void>;

/** The longest a swap waits for its before-swap hooks (a hook has its own, shorter budget; this bounds a hung one). */
export const SWAP_HOOK_LIMIT_MS = 30_000;

export class SnapshotReader {
  private active: Active | null = null;
  private readonly beforeSwapHooks = new Set<BeforeSwapHook>();
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<boolean> | null = null;
  private readonly listeners = new Set<(m: SnapshotManifest) => void>();

  private constructor(
    readonly dataDir: string,
    readonly domain: string,
    private readonly opts: ReaderOptions,
  ) {}

  /** Opens the current snapshot if there is one, and starts polling for new ones. */
  static async open(dataDir: string, domain: string, opts: ReaderOptions = {}): Promise<SnapshotReader> {
    const r = new SnapshotReader(dataDir, domain, opts);
    await r.refresh();
    if (opts.pollMs) {
      r.timer = setInterval(
        () =>
          void r
            .refresh()
            .catch((err) =>
              opts.log?.warn({ err, domain }, 'snapshot refresh failed; the served snapshot stays, retried on the next poll'),
            ),
        opts.pollMs,
      );
      r.timer.unref();
    }
    return r;
  }

  /** The snapshot this caller reads: the staged one inside a `beforeSwap` hook of this reader, else the active one. */
  private current(): Active | null {
    const staged = stagedScope.getStore();
    return staged?.get(this) ?? this.active;
  }

  /** The manifest being served (to this caller: see `beforeSwap`), or null when the domain has not been published yet. */
  get manifest(): SnapshotManifest | null {
    return this.current()?.manifest ?? null;
  }

  /**
   * Registers a hook run before each swap to a newer snapshot (not at open), with the new snapshot staged for the
   * hook's own queries; the swap waits for it, at most `SWAP_HOOK_LIMIT_MS`. A hook that fails or overruns is
   * logged and the swap goes on: a hook can delay a swap, never stop it. Returns an unsubscribe function.
   */
  beforeSwap(fn: BeforeSwapHook): () => void {
    this.beforeSwapHooks.add(fn);
    return () => this.beforeSwapHooks.delete(fn);
  }

  /** Registers a listener called after each swap; returns an unsubscribe function. */
  onSwap(fn: (m: SnapshotManifest) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Checks the pointer and swaps to a newer snapshot. Returns true when it swapped. */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async doRefresh(): Promise<boolean> {
    const ptr = await readCurrentPointer(this.dataDir, this.domain);
    if (!ptr || ptr.snapshot_id === this.active?.manifest.snapshot_id) return false;
    const dir = snapshotDir(this.dataDir, this.domain, ptr.snapshot_id);
    const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as SnapshotManifest;
    const db = await openDatabase(path.join(dir, 'serving.duckdb'), {
      readOnly: true,
      threads: 1,
      memoryLimit: this.opts.memoryLimit ?? '512MB',
    });
    const views = parquetViewsSql(dir, manifest);
    // With parquet-only tables, footers are parsed once per file instead of on every query (snapshot files never
    // change): a leaf-key lookup over quote_leaf_keys' 40 files at full scale took 58 ms without, 37 ms with.
    // A global setting, set through SQL (the parquet extension is not loaded yet when the instance is configured).
    if (views.length) views.unshift('SET parquet_metadata_cache = true');
    const pool = await ConnectionPool.create(
      db,
      this.opts.poolSize ?? 4,
      views.length
        ? async (c) => {
            for (const v of views) await c.run(v);
          }
        : undefined,
    );
    const packed = new Map<string, PackedStore>();
    for (const name of Object.keys(manifest.packed ?? {})) packed.set(name, await PackedStore.open(path.join(dir, 'packed'), name));
    const next: Active = { manifest, dir, pool, packed };
    if (this.active && this.beforeSwapHooks.size) {
      await this.runBeforeSwap(next);
      if (this.closed) {
        // Closed while the hooks ran: the staged snapshot is never served.
        await pool.close().catch(() => undefined);
        await Promise.all([...packed.values()].map((p) => p.close()));
        return false;
      }
    }
    const old = this.active;
    this.active = next;
    for (const l of this.listeners) l(manifest);
    if (old) {
      void old.pool.close().catch(() => undefined);
      for (const p of old.packed.values()) void p.close();
    }
    return true;
  }

  /** Runs the before-swap hooks with `next` staged, bounded by SWAP_HOOK_LIMIT_MS; failures are logged, never thrown. */
  private async runBeforeSwap(next: Active): Promise<void> {
    const staged = new Map([[this as SnapshotReader, next]]);
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'overran'>((resolve) => {
      timer = setTimeout(() => resolve('overran'), SWAP_HOOK_LIMIT_MS);
      timer.unref();
    });
    stagings++;
    const hooks = stagedScope.run(staged, () =>
      Promise.all(
        [...this.beforeSwapHooks].map((h) =>
          Promise.resolve()
            .then(() => h(next.manifest, this.domain))
            .then(
              () => undefined,
              (err: unknown) => err ?? new Error('before-swap hook failed'),
            ),
        ),
      ),
    );
    const outcome = await Promise.race([hooks, limit]).finally(() => {
      // A hook that overran and still runs reads the active snapshot from here on (the staged one, once swapped).
      if (--stagings === 0) stagedScope.disable();
    });
    clearTimeout(timer);
    if (outcome === 'overran')
      this.opts.log?.warn({ domain: this.domain, limit_ms: SWAP_HOOK_LIMIT_MS }, 'before-swap hook overran; swapping without waiting');
    else
      for (const err of outcome)
        if (err !== undefined) this.opts.log?.warn({ err, domain: this.domain }, 'before-swap hook failed; swapping anyway');
  }

  /** The packed record store `name` of the snapshot being served, or null (not published, or an older snapshot without it). */
  packed(name: string): PackedStore | null {
    return this.current()?.packed.get(name) ?? null;
  }

  /**
   * Absolute paths of a parquet-only table's files in the snapshot being served (in table order), or null (not
   * published, or not a parquet-only table). Read together with `packed()` in one synchronous step, both name the
   * same snapshot.
   */
  tableFiles(table: string): readonly string[] | null {
    const a = this.current();
    const tm = a?.manifest.tables[table];
    if (!a || !tm || tm.storage !== 'parquet') return null;
    // Listed once per snapshot's table (its manifest entry): the quote routes ask on every request (issue 22).
    let files = tableFilesOf.get(tm);
    if (!files) tableFilesOf.set(tm, (files = Object.freeze(tableFilePaths(a.dir, table, tm))));
    return files;
  }

  /** Runs a read query on the current snapshot. Throws SourceUnavailableError (503) when nothing is published. */
  async query(sql: string, params?: Params): Promise<Row[]> {
    const a = this.current();
    if (!a) throw new SourceUnavailableError(`no ${this.domain} snapshot has been published yet`, { domain: this.domain });
    try {
      return await a.pool.query(sql, params);
    } catch (e) {
      // A snapshot file that cannot be read (pruned or moved under a long query) is transient: the next
      // request reads the snapshot the pointer names. Any other error (SQL, binding) stays what it is.
      if (/^IO Error/i.test((e as Error).message ?? ''))
        throw new SourceUnavailableError(`the ${this.domain} snapshot could not be read; retry`, { domain: this.domain }, { cause: e });
      throw e;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const a = this.active;
    this.active = null;
    if (a) {
      await a.pool.close();
      await Promise.all([...a.packed.values()].map((p) => p.close()));
    }
  }
}
