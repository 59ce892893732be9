/**
 * Read side of a domain: a pool of read-only connections to the current
 * snapshot's `serving.duckdb`. It polls the CURRENT pointer and, when a new
 * snapshot is published, opens it, swaps atomically for new queries and closes
 * the old pool once its in-flight queries finish. Listeners (response caches)
 * are told on every swap so they can drop what they built from the old one.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SourceUnavailableError } from '../errors.ts';
import { ConnectionPool, openDatabase, type Params, type Row } from './duckdb.ts';
import { snapshotDir } from './layout.ts';
import { readCurrentPointer, type SnapshotManifest } from './snapshot.ts';

export interface ReaderOptions {
  poolSize?: number;
  memoryLimit?: string;
  /** 0 disables polling (tests call `refresh()`). */
  pollMs?: number;
}

interface Active {
  manifest: SnapshotManifest;
  pool: ConnectionPool;
}

export class SnapshotReader {
  private active: Active | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<boolean> | null = null;
  private readonly listeners = new Set<(m: SnapshotManifest) => void>();

  private constructor(readonly dataDir: string, readonly domain: string, private readonly opts: ReaderOptions) {}

  /** Opens the current snapshot if there is one, and starts polling for new ones. */
  static async open(dataDir: string, domain: string, opts: ReaderOptions = {}): Promise<SnapshotReader> {
    const r = new SnapshotReader(dataDir, domain, opts);
    await r.refresh();
    if (opts.pollMs) {
      r.timer = setInterval(() => void r.refresh().catch(() => undefined), opts.pollMs);
      r.timer.unref();
    }
    return r;
  }

  /** The manifest being served, or null when the domain has not been published yet. */
  get manifest(): SnapshotManifest | null {
    return this.active?.manifest ?? null;
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
    const db = await openDatabase(path.join(dir, 'serving.duckdb'), { readOnly: true, threads: 1, memoryLimit: this.opts.memoryLimit ?? '512MB' });
    const pool = await ConnectionPool.create(db, this.opts.poolSize ?? 4);
    const old = this.active;
    this.active = { manifest, pool };
    for (const l of this.listeners) l(manifest);
    if (old) void old.pool.close().catch(() => undefined);
    return true;
  }

  /** Runs a read query on the current snapshot. Throws SourceUnavailableError (503) when nothing is published. */
  async query(sql: string, params?: Params): Promise<Row[]> {
    const a = this.active;
    if (!a) throw new SourceUnavailableError(`no ${this.domain} snapshot has been published yet`, { domain: this.domain });
    return a.pool.query(sql, params);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    const a = this.active;
    this.active = null;
    if (a) await a.pool.close();
  }
}
