/**
 * Change detection at FMCSA publish: compares every watched carrier's
 * `carrier_risk` row in the previous snapshot with its row in the new one,
 * set-wise in DuckDB over the two snapshots' parquet files (detect-changes.sql),
 * never carrier by carrier. Each change event names both snapshot ids, the
 * changed fields with their before and after values, and the origin leaves of
 * both rows: the same leaf `GET /api/carrier/{dot}/snapshot` returns for the
 * carrier in that snapshot (kind `snapshot`, content_sha256 = the table file's
 * SHA-256 in the manifest, record_sha256 = SHA-256 of the RFC 8785 JSON of its
 * features; lib/origin.ts). Events are stored in the state store, idempotently:
 * the event id is derived from (snapshots, DOT), so a replayed detection job
 * stores nothing twice.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { hashCanonical } from '../../lib/hash.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { createLeaf, type OriginLeaf } from '../../lib/origin.ts';
import { loadSql, openDatabase, queryRows, quoteLiteral, type Row } from '../../lib/warehouse/duckdb.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { readManifest, tableFilePaths, type SnapshotManifest } from '../../lib/warehouse/snapshot.ts';
import { featuresFromRow } from '../carriers/carriers.queries.ts';
import { bindFor, loadDialectSql } from '../platform/named-params.ts';
import { decodeSeqCursor, encodeKeyCursor } from '../platform/pagination.ts';
import { queryCommitted, type StateStore } from '../platform/state.store.ts';

const SQL = {
  detect: loadSql('./detect-changes.sql', import.meta.url),
  insert: loadDialectSql('./insert-change-event.sql', import.meta.url),
  list: loadDialectSql('./list-change-events.sql', import.meta.url),
  watched: loadDialectSql('./watched-dots.sql', import.meta.url),
  getMeta: loadDialectSql('./get-meta.sql', import.meta.url),
  setMeta: loadDialectSql('./set-meta.sql', import.meta.url),
};

/** The fields whose before/after values an event lists when they differ (carrier_risk columns). */
export const COMPARED_FIELDS = [
  'authority_status',
  'bipd_on_file_k',
  'bipd_required_k',
  'oos_orders_active',
  'oos_orders_total',
  'crashes_24m',
  'fatal_crashes_24m',
  'injury_crashes_24m',
  'risk_score',
  'risk_level',
  'recommendation',
  'red_flag_codes',
  'unsafe_driv_alert',
  'hos_driv_alert',
  'driv_fit_alert',
  'contr_subst_alert',
  'veh_maint_alert',
  'hm_compliance_alert',
  'crash_ind_alert',
] as const;

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface ChangeEvent {
  event_id: string;
  dot_number: number;
  prev_snapshot_id: string;
  next_snapshot_id: string;
  kinds: string[];
  changes: FieldChange[];
  origin: { prev: OriginLeaf; next: OriginLeaf };
  detected_at: string;
}

/** The leaf of one carrier_risk row of a snapshot (same construction as getRiskSnapshot in service/carriers). */
function rowLeaf(manifest: SnapshotManifest, row: Row): OriginLeaf {
  return createLeaf({
    kind: 'snapshot',
    source: 'fmcsa/carrier_risk',
    source_url: null,
    retrieved_at: null,
    content_sha256: manifest.tables.carrier_risk?.sha256 ?? null,
    record_sha256: hashCanonical(featuresFromRow(row)),
    parent: null,
  });
}

function carrierRiskFiles(dataDir: string, manifest: SnapshotManifest): string[] {
  const dir = snapshotDir(dataDir, 'fmcsa', manifest.snapshot_id);
  const files = tableFilePaths(dir, 'carrier_risk', manifest.tables.carrier_risk);
  if (!files.length || !files.every((f) => existsSync(f)))
    throw new InvalidInputError(`snapshot ${manifest.snapshot_id} has no carrier_risk parquet (pruned?)`, {
      response: { snapshot_id: manifest.snapshot_id },
    });
  return files;
}

export interface DetectOptions {
  /** DuckDB memory limit of the comparison (default 1GB) and its spill directory. */
  memoryLimit?: string;
  threads?: number;
  /** The carriers to compare; default every carrier on any watchlist. */
  dots?: number[];
}

/**
 * Compares two published FMCSA snapshots for the watched carriers and stores
 * one event per changed carrier. Returns the events (also those stored by an
 * earlier run of the same comparison) and the number of carriers compared.
 */
export async function detectChanges(
  store: StateStore,
  dataDir: string,
  prevId: string,
  nextId: string,
  now: Date,
  opts: DetectOptions = {},
): Promise<{ events: ChangeEvent[]; watched: number; ms: number }> {
  const t0 = Date.now();
  const [prev, next] = await Promise.all([readManifest(dataDir, 'fmcsa', prevId), readManifest(dataDir, 'fmcsa', nextId)]);
  const dots = opts.dots ?? (await store.query(SQL.watched[store.backend])).map((r) => Number(r.dot_number));
  if (!dots.length) return { events: [], watched: 0, ms: Date.now() - t0 };
  const db = await openDatabase(':memory:', {
    threads: opts.threads ?? 2,
    memoryLimit: opts.memoryLimit ?? '1GB',
    tempDirectory: path.join(dataDir, 'tmp'),
  });
  let rows: Row[];
  try {
    const conn = await db.connect();
    try {
      // Paths cannot be bound as parameters in a view: quoteLiteral is the sanctioned splice (lib/warehouse/duckdb.ts).
      const list = (files: string[]) => `[${files.map(quoteLiteral).join(', ')}]`;
      await conn.run(`CREATE VIEW prev_rows AS SELECT * FROM read_parquet(${list(carrierRiskFiles(dataDir, prev))})`);
      await conn.run(`CREATE VIEW next_rows AS SELECT * FROM read_parquet(${list(carrierRiskFiles(dataDir, next))})`);
      rows = await queryRows(conn, SQL.detect, { dots: JSON.stringify(dots) });
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
  const at = now.toISOString();
  const events: ChangeEvent[] = rows.map((r) => {
    const before = JSON.parse(String(r.prev_row)) as Row;
    const after = JSON.parse(String(r.next_row)) as Row;
    const dot = Number(r.dot_number);
    const changes = COMPARED_FIELDS.filter((f) => JSON.stringify(before[f] ?? null) !== JSON.stringify(after[f] ?? null)).map((f) => ({
      field: f,
      before: before[f] ?? null,
      after: after[f] ?? null,
    }));
    return {
      event_id: `CHG-${hashCanonical({ domain: 'fmcsa', prev: prevId, next: nextId, dot }).slice(0, 24)}`,
      dot_number: dot,
      prev_snapshot_id: prevId,
      next_snapshot_id: nextId,
      kinds: r.kinds as string[],
      changes,
      origin: { prev: rowLeaf(prev, before), next: rowLeaf(next, after) },
      detected_at: at,
    };
  });
  if (events.length)
    await store.write((tx) =>
      tx.write(
        ...bindFor(store, SQL.insert, {
          rows: JSON.stringify(
            events.map((e) => ({
              event_id: e.event_id,
              dot_number: e.dot_number,
              prev_snapshot_id: prevId,
              next_snapshot_id: nextId,
              kinds_json: JSON.stringify(e.kinds),
              changes_json: JSON.stringify(e.changes),
              prev_origin_json: JSON.stringify(e.origin.prev),
              next_origin_json: JSON.stringify(e.origin.next),
              detected_at: at,
            })),
          ),
        }),
      ),
    );
  return { events, watched: dots.length, ms: Date.now() - t0 };
}

function eventOf(r: Row): ChangeEvent & { seq: number } {
  return {
    event_id: String(r.event_id),
    seq: Number(r.seq),
    dot_number: Number(r.dot_number),
    prev_snapshot_id: String(r.prev_snapshot_id),
    next_snapshot_id: String(r.next_snapshot_id),
    kinds: JSON.parse(String(r.kinds_json)),
    changes: JSON.parse(String(r.changes_json)),
    origin: { prev: JSON.parse(String(r.prev_origin_json)), next: JSON.parse(String(r.next_origin_json)) },
    detected_at: String(r.detected_at),
  };
}

/** One page of the change events of the account's watched carriers, oldest first (`cursor` = next_cursor, the opaque keyset cursor of pagination.ts holding the last sequence number). */
export async function listChangeEvents(store: StateStore, accountId: string, q: { limit: number; cursor?: string; dot?: number }) {
  const after = decodeSeqCursor(q.cursor) ?? 0;
  const rows = await queryCommitted(store, ...bindFor(store, SQL.list, { id: accountId, after, dot: q.dot ?? null, limit: q.limit + 1 }));
  const page = rows.slice(0, q.limit).map(eventOf);
  return {
    account_id: accountId,
    limit: q.limit,
    next_cursor: rows.length > q.limit ? encodeKeyCursor([String(page[page.length - 1]!.seq)]) : null,
    events: page.map(({ seq: _s, ...e }) => e),
  };
}

const LAST_KEY = 'monitoring.fmcsa.last_snapshot_id';

/** The FMCSA snapshot change detection last compared up to (null before the first). */
export async function lastMonitoredSnapshot(store: StateStore): Promise<string | null> {
  const r = await store.query(...bindFor(store, SQL.getMeta, { k: LAST_KEY }));
  return r[0] ? String(r[0].value) : null;
}

/** Records that change detection has compared up to `snapshotId`. */
export async function markMonitoredSnapshot(store: StateStore, snapshotId: string): Promise<void> {
  await store.write((tx) => tx.write(...bindFor(store, SQL.setMeta, { k: LAST_KEY, v: snapshotId })));
}
