/**
 * /api/status and /api/attestation: what the vetting records stand on.
 *
 * Attestation root: `root_hash` = SHA-256 of the RFC 8785 canonical JSON of
 * `{"<table>": "<sha256 of the table's parquet file>", ...}` taken from the
 * fmcsa snapshot manifest (keys sorted by the canonical form), so anyone with
 * the published parquet files can recompute every table hash and the root.
 * The provenance chain lists each source file (the `sources` table: path or
 * URL, SHA-256, retrieval time, run) and the tables its rows went into (from
 * the tables' `source_file` column and from `origin_leaves`). The whole attestation is signed with the service key.
 */
import { withMembers } from '../../lib/objects.ts';
import path from 'node:path';
import { SourceUnavailableError } from '../../lib/errors.ts';
import { hashCanonical } from '../../lib/hash.ts';
import { signCanonical, type SigningKey } from '../../lib/keys.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import type { SnapshotManifest } from '../../lib/warehouse/snapshot.ts';
import { quoteIdentifier } from '../../lib/warehouse/duckdb.ts';
import type { Readers } from '../platform/deps.ts';
import { queryCommitted, type StateStore } from '../platform/state.store.ts';
import { getDatasetStatus } from '../carriers/carriers.queries.ts';

export interface StatusReport {
  status: 'ok' | 'no_data';
  generated_at: string;
  database_version: {
    duckdb: string | null;
    service: string;
    fmcsa_snapshot_id: string | null;
    fmcsa_published_at: string | null;
    risk_model: string | null;
  };
  datasets: unknown;
  tables: Array<{ domain: string; table: string; rows: number }>;
  domains: Array<{ domain: string; snapshot_id: string | null; published_at: string | null }>;
  state: { vetting_records: number; care_documents: number; care_events: number; accounts: number } | null;
}

let riskModel: Promise<string | null> | null = null;
/** The risk model's version (a constant of the code: imported once). */
function riskModelVersion(): Promise<string | null> {
  riskModel ??= import('../../ingest/fmcsa/risk-model.ts').then(
    (m) => m.RISK_MODEL_VERSION,
    () => null,
  );
  return riskModel;
}

/** Record counts per dataset and table, as-of dates, database versions, state counts. */
export async function getStatus(readers: Readers, store: StateStore | undefined, version: string, now: Date): Promise<StatusReport> {
  const fmcsa = readers.fmcsa;
  const m = fmcsa?.manifest ?? null;
  let datasets: unknown = null;
  if (fmcsa && m) datasets = await getDatasetStatus(fmcsa);
  const tables: StatusReport['tables'] = [];
  const domains: StatusReport['domains'] = [];
  for (const [domain, r] of Object.entries(readers).sort(([a], [b]) => a.localeCompare(b))) {
    const dm = r.manifest;
    domains.push({ domain, snapshot_id: dm?.snapshot_id ?? null, published_at: dm?.published_at ?? null });
    if (dm)
      for (const [table, t] of Object.entries(dm.tables).sort(([a], [b]) => a.localeCompare(b)))
        tables.push({ domain, table, rows: t.rows });
  }
  let state: StatusReport['state'] = null;
  if (store) {
    // Through the state read cache (embedded store): counted again only after a write to one of these tables.
    const [c] = await queryCommitted(
      store,
      `SELECT (SELECT count(*) FROM vetting_records)::INTEGER AS v, (SELECT count(*) FROM care_documents)::INTEGER AS d,
      (SELECT count(*) FROM care_events)::INTEGER AS e, (SELECT count(*) FROM accounts)::INTEGER AS a`,
    );
    state = { vetting_records: Number(c!.v), care_documents: Number(c!.d), care_events: Number(c!.e), accounts: Number(c!.a) };
  }
  return {
    status: m ? 'ok' : 'no_data',
    generated_at: now.toISOString(),
    database_version: {
      duckdb: m?.duckdb_version ?? null,
      service: version,
      fmcsa_snapshot_id: m?.snapshot_id ?? null,
      fmcsa_published_at: m?.published_at ?? null,
      risk_model: await riskModelVersion(),
    },
    datasets,
    tables,
    domains,
    state,
  };
}

export interface Attestation {
  domain: 'fmcsa';
  snapshot_id: string;
  published_at: string;
  input_digest: string | null;
  root_hash: string;
  root_algorithm: string;
  tables: Array<{ table: string; sha256: string; rows: number; bytes: number }>;
  provenance: Array<{
    dataset: string;
    path: string | null;
    source_url: string | null;
    content_sha256: string;
    byte_size: number;
    retrieved_at: string | null;
    run_id: string;
    leaf_hash: string;
    tables: string[];
  }>;
  signature: { alg: 'Ed25519'; key_id: string; value: string } | null;
}

/** The root hash over a manifest's table hashes (see module doc). */
export function rootHashOf(tables: Record<string, { sha256: string }>): string {
  return hashCanonical(Object.fromEntries(Object.entries(tables).map(([k, v]) => [k, v.sha256])));
}

/**
 * The attestation depends only on the served fmcsa snapshot (its manifest, sources and lineage) and the signing
 * key (Ed25519 signatures are deterministic): built once per snapshot id and key id, then the same object for every
 * request (issue 22: it read every `source_file` column on each request, 79 ms at full scale). A failed build is
 * not kept.
 */
const attestationMemo = new WeakMap<SnapshotReader, { id: string; answer: Promise<Attestation> }>();

/** Attestation of the current fmcsa snapshot, signed when a key is given. */
export async function getAttestation(fmcsa: SnapshotReader | undefined, key: SigningKey | null): Promise<Attestation> {
  const m = fmcsa?.manifest;
  if (!fmcsa || !m) throw new SourceUnavailableError('no fmcsa snapshot has been published yet');
  const id = `${m.snapshot_id}|${key?.keyId ?? ''}`;
  const memo = attestationMemo.get(fmcsa);
  if (memo?.id === id) return memo.answer;
  const answer = buildAttestation(fmcsa, m, key);
  attestationMemo.set(fmcsa, { id, answer });
  answer.catch(() => {
    if (attestationMemo.get(fmcsa)?.answer === answer) attestationMemo.delete(fmcsa);
  });
  return answer;
}

async function buildAttestation(fmcsa: SnapshotReader, m: SnapshotManifest, key: SigningKey | null): Promise<Attestation> {
  const sources = await fmcsa.query(
    `SELECT s.dataset, s.path, s.source_url, s.content_sha256, s.byte_size::BIGINT AS byte_size, s.retrieved_at, s.run_id, s.leaf_hash,
            coalesce((SELECT list(DISTINCT o.table_name ORDER BY o.table_name) FROM origin_leaves o WHERE o.parent = s.leaf_hash AND o.table_name IS NOT NULL), []) AS tables
       FROM sources s ORDER BY s.dataset, s.path, s.content_sha256`,
  );
  // Lineage from the data itself: tables that record each row's `source_file`, plus origin leaves that name a table.
  const withSource = await fmcsa.query(
    "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'source_file' ORDER BY table_name",
  );
  const fileTables = new Map<string, Set<string>>();
  for (const t of withSource.map((r) => String(r.table_name)).filter((t) => t in m.tables)) {
    for (const r of await fmcsa.query(`SELECT DISTINCT source_file FROM ${quoteIdentifier(t)} WHERE source_file IS NOT NULL`)) {
      const f = String(r.source_file);
      if (!fileTables.has(f)) fileTables.set(f, new Set());
      fileTables.get(f)!.add(t);
    }
  }
  const tablesOf = (p: string | null, fromLeaves: string[]): string[] => {
    const out = new Set(fromLeaves);
    if (p)
      for (const [f, ts] of fileTables)
        if (f === p || p.endsWith(`/${f}`) || f.endsWith(`/${path.basename(p)}`) || path.basename(f) === path.basename(p))
          for (const t of ts) out.add(t);
    return [...out].sort();
  };
  const body: Omit<Attestation, 'signature'> = {
    domain: 'fmcsa',
    snapshot_id: m.snapshot_id,
    published_at: m.published_at,
    input_digest: m.input_digest,
    root_hash: rootHashOf(m.tables),
    root_algorithm: 'sha256(rfc8785({table: table_sha256}))',
    tables: Object.entries(m.tables)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([table, t]) => ({ table, sha256: t.sha256, rows: t.rows, bytes: t.bytes })),
    provenance: sources.map((s) => ({
      dataset: String(s.dataset),
      path: s.path === null ? null : String(s.path),
      source_url: s.source_url === null ? null : String(s.source_url),
      content_sha256: String(s.content_sha256),
      byte_size: Number(s.byte_size),
      retrieved_at: s.retrieved_at === null ? null : String(s.retrieved_at),
      run_id: String(s.run_id),
      leaf_hash: String(s.leaf_hash),
      tables: tablesOf(s.path === null ? null : String(s.path), (s.tables as string[] | null) ?? []),
    })),
  };
  return withMembers(body, { signature: key ? { alg: 'Ed25519', key_id: key.keyId, value: signCanonical(key, body) } : null });
}

/** Reads a table file's bytes path for recomputation tests. */
export function tableFilePath(dataDir: string, snapshotId: string, table: string): string {
  return path.join(dataDir, 'warehouse', 'fmcsa', 'snapshots', snapshotId, 'tables', `${table}.parquet`);
}
