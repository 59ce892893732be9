/**
 * Builds, stamps, signs and caches the discovery files of this instance.
 *
 * Each JSON file is built from the current context; its `generated` is the
 * time its content (everything but `generated` and `_signature`) last
 * changed, kept in the persistent state, so bytes, contentHash and ETag stay
 * stable across requests and restarts and change exactly when the content
 * does, at which point an archive record superseding the previous one is
 * appended. The set is rebuilt when a served snapshot, the public base URL
 * or the signing key changes; builds are serialised.
 */
import type { H3 } from 'h3';
import { hashCanonical, sha256Hex } from '../../lib/hash.ts';
import { discoveryManifestJsonSchema } from '../../lib/discovery/manifest.schema.ts';
import { computeContentHash } from '../../lib/discovery/verify.ts';
import { listSnapshots, readManifest, type SnapshotManifest } from '../../lib/warehouse/snapshot.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { listMcpTools } from '../mcp/mcp.queries.ts';
import { readDiscoveryState, resourceSlug, writeDiscoveryState, type ArchiveRecordOut, type DiscoveryState } from './archive-state.ts';
import { withDiscoveryLink } from '../platform/discovery-html.ts';
import { loadOrCreateDiscoveryKey, signDiscoveryDocument, type DiscoveryKey } from './discovery-signer.ts';
import {
  buildArchive,
  buildFeed,
  buildHomeHtml,
  buildKnowledge,
  buildLlmsTxt,
  buildManifest,
  buildPages,
  buildQueryContract,
  CACHE_SECONDS,
  PATHS,
  type DiscoveryContext,
  type OrgIdentity,
  type PageEntry,
  type RouteInfo,
} from './discovery.documents.ts';

export interface ServedFile {
  path: string;
  /** The file's text as UTF-8, encoded once when the set is built (the archive is 768 KB at full scale; issue 22). */
  bytes: Uint8Array;
  contentType: string;
  cacheSeconds: number;
  /** Strong ETag (quoted). */
  etag: string;
  /** JSON files: the `_signature.contentHash`. */
  contentHash: string | null;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A served file's text as its UTF-8 bytes. */
function bodyOf(body: string): { bytes: Uint8Array } {
  return { bytes: Buffer.from(body) };
}

/** Default identity when ServiceOptions carries none (tests, embedded use). */
export function orgFromOptions(deps: ServiceDeps): OrgIdentity {
  const o = deps.options.org;
  let host = 'localhost';
  try {
    host = new URL(deps.options.publicBaseUrl).hostname;
  } catch {
    /* keep localhost */
  }
  return {
    name: o?.name ?? 'Proofline',
    domain: o?.domain ?? host,
    mission: o?.mission ?? 'Verifiable company-registry and carrier-vetting data for AI agents.',
    sector: o?.sectors?.length ? o.sectors : ['financial-data', 'freight', 'provenance'],
  };
}

/** Routes registered on the app (h3 keeps them in `~routes`); used so capabilities describe what this instance really serves. */
export function routesOf(app: H3): RouteInfo[] {
  const raw = (app as unknown as { '~routes'?: { route?: string; method?: string }[] })['~routes'] ?? [];
  return raw.filter((r) => typeof r.route === 'string').map((r) => ({ method: (r.method ?? 'ALL').toUpperCase(), route: r.route! }));
}

export class DiscoveryPublisher {
  private cache: { key: string; files: Map<string, ServedFile> } | null = null;
  private building: Promise<void> | null = null;
  private keyPromise: Promise<DiscoveryKey | null> | null = null;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly app: H3,
    /** Whether carrier queries are wired into /ai/query. */
    private readonly carrierQueries = false,
  ) {}

  /** The discovery key, loaded (or generated) once from options.discoveryKeyPath; null = tier 2. */
  signingKey(): Promise<DiscoveryKey | null> {
    const p = this.deps.options.discoveryKeyPath;
    this.keyPromise ??= p ? loadOrCreateDiscoveryKey(p) : Promise.resolve(null);
    return this.keyPromise;
  }

  private cacheKey(key: DiscoveryKey | null): string {
    const snaps = Object.entries(this.deps.readers)
      .map(([d, r]) => `${d}=${r.manifest?.snapshot_id ?? '-'}`)
      .sort()
      .join(',');
    return `${this.deps.options.publicBaseUrl}|${snaps}|${key?.address ?? '-'}|${routesOf(this.app).length}`;
  }

  /** The served file at `path`, building the set first when it is stale. */
  async file(path: string): Promise<ServedFile | null> {
    const key = await this.signingKey();
    for (;;) {
      const want = this.cacheKey(key);
      if (this.cache?.key === want) return this.cache.files.get(path) ?? null;
      if (!this.building) {
        this.building = this.build(key, want).finally(() => (this.building = null));
      }
      await this.building;
      if (this.cache?.key === want) return this.cache.files.get(path) ?? null;
    }
  }

  private async snapshots(): Promise<SnapshotManifest[]> {
    const out = new Map<string, SnapshotManifest>();
    for (const [domain, reader] of Object.entries(this.deps.readers)) {
      for (const id of await listSnapshots(this.deps.options.dataDir, domain)) {
        // A snapshot folder being written has no manifest yet; a pruned one vanishes: skip both.
        const m = await readManifest(this.deps.options.dataDir, domain, id).catch(() => null);
        if (m) out.set(`${domain}/${id}`, m);
      }
      const cur = reader.manifest;
      if (cur && !out.has(`${domain}/${cur.snapshot_id}`)) out.set(`${domain}/${cur.snapshot_id}`, cur);
    }
    return [...out.values()];
  }

  private async build(key: DiscoveryKey | null, cacheKey: string): Promise<void> {
    const now = this.deps.now().toISOString();
    const state: DiscoveryState = await readDiscoveryState(this.deps.options.dataDir, (aside) =>
      this.deps.log.error({ moved_to: aside }, 'discovery archive state was unreadable; moved aside, starting a new lineage'),
    );
    let dirty = false;
    const version = this.deps.options.version;
    if (!state.releases[version]) {
      state.releases[version] = now;
      dirty = true;
    }
    const ctx: DiscoveryContext = {
      base: this.deps.options.publicBaseUrl,
      org: orgFromOptions(this.deps),
      version,
      routes: routesOf(this.app),
      snapshots: await this.snapshots(),
      releaseSeenAt: state.releases[version],
      signerAddress: key?.address ?? null,
      carrierQueries: this.carrierQueries,
      mcpTools: routesOf(this.app).some((r) => r.route === PATHS.mcp) ? listMcpTools() : [],
    };
    const files = new Map<string, ServedFile>();

    const stamp = (path: string, assertionType: string, summary: string, make: (generated: string) => Record<string, unknown>): void => {
      const fingerprint = hashCanonical(make(''));
      const prev = state.resources[path];
      const generated = prev && prev.fingerprint === fingerprint ? prev.generated : now;
      const doc = make(generated);
      const contentHash = computeContentHash(doc);
      const signer = key?.address ?? null;
      const signedAt = prev && prev.contentHash === contentHash && prev.signedBy === signer ? prev.signedAt : signer ? now : generated;
      if (!prev || prev.contentHash !== contentHash) {
        const seq = (prev?.seq ?? 0) + 1;
        const versionId = `${resourceSlug(path)}-v${seq}-${contentHash.slice(7, 15)}`;
        const record: ArchiveRecordOut = {
          versionId,
          resource: path,
          contentHash,
          publishedAt: generated,
          signedAt,
          assertionType,
          summary,
        };
        if (prev) record.supersedes = prev.versionId;
        state.records.push(record);
        state.resources[path] = { fingerprint, contentHash, generated, versionId, seq, signedBy: signer, signedAt };
        dirty = true;
      } else if (prev.signedBy !== signer || prev.signedAt !== signedAt || prev.fingerprint !== fingerprint) {
        state.resources[path] = { ...prev, fingerprint, signedBy: signer, signedAt };
        dirty = true;
      }
      const signed = signDiscoveryDocument(doc, key, signedAt);
      const etag = `"${contentHash.slice(7)}${signer ? `.${signer.slice(2, 10).toLowerCase()}` : ''}"`;
      files.set(path, {
        path,
        ...bodyOf(JSON.stringify(signed, null, 2) + '\n'),
        contentType: JSON_TYPE,
        cacheSeconds: CACHE_SECONDS[path] ?? 3600,
        etag,
        contentHash,
      });
    };
    const text = (path: string, body: string, contentType: string): void => {
      files.set(path, {
        path,
        ...bodyOf(body),
        contentType,
        cacheSeconds: CACHE_SECONDS[path] ?? 3600,
        etag: `"${sha256Hex(body)}"`,
        contentHash: null,
      });
    };

    stamp(PATHS.manifest, 'official-policy', 'AI discovery manifest', (g) => buildManifest(ctx, g));
    stamp(PATHS.knowledge, 'technical-documentation', 'Knowledge: summary, glossary, products, technology', (g) => buildKnowledge(ctx, g));
    stamp(PATHS.feed, 'technical-documentation', 'Feed of published ingest runs and releases', (g) => buildFeed(ctx, g));
    stamp(PATHS.query, 'technical-documentation', 'Request and response contract of /ai/query', (g) => buildQueryContract(ctx, g));
    text(PATHS.home, withDiscoveryLink(buildHomeHtml(ctx)), 'text/html; charset=utf-8');
    text(PATHS.llms, buildLlmsTxt(ctx), 'text/plain; charset=utf-8');
    text(
      PATHS.schema,
      JSON.stringify(discoveryManifestJsonSchema(`${ctx.base}${PATHS.schema}`), null, 2) + '\n',
      'application/schema+json',
    );

    const pageOf = (path: string, title: string, assertionType: string): PageEntry => {
      const f = files.get(path)!;
      return { path, title, assertionType, contentHash: `sha256:${sha256Hex(f.bytes)}`, format: f.contentType.split(';')[0] };
    };
    const pages = [
      pageOf(PATHS.home, `${ctx.org.name} home`, 'official-policy'),
      pageOf(PATHS.llms, 'llms.txt', 'technical-documentation'),
      pageOf(PATHS.manifest, 'AI discovery manifest', 'official-policy'),
      pageOf(PATHS.knowledge, 'Knowledge', 'technical-documentation'),
      pageOf(PATHS.feed, 'Feed', 'technical-documentation'),
      pageOf(PATHS.query, 'Query contract', 'technical-documentation'),
    ];
    stamp(PATHS.pages, 'technical-documentation', 'Page manifest: hashes of the bytes served', (g) => buildPages(ctx, g, pages));

    // The archive lists every other file's versions; it cannot list itself, so it is signed but not recorded.
    const records = state.records.map((r) => ({ ...r }));
    // biome-ignore lint/complexity/useMathMinMax: publishedAt is an ISO-8601 string; the latest sorts last
    const archiveGenerated = records.reduce((m, r) => (r.publishedAt > m ? r.publishedAt : m), '');
    const archiveDoc = buildArchive(ctx, archiveGenerated || now, records);
    const archiveHash = computeContentHash(archiveDoc);
    const archiveSigned = signDiscoveryDocument(archiveDoc, key, archiveGenerated || now);
    files.set(PATHS.archive, {
      path: PATHS.archive,
      ...bodyOf(JSON.stringify(archiveSigned, null, 2) + '\n'),
      contentType: JSON_TYPE,
      cacheSeconds: CACHE_SECONDS[PATHS.archive],
      etag: `"${archiveHash.slice(7)}${key ? `.${key.address.slice(2, 10).toLowerCase()}` : ''}"`,
      contentHash: archiveHash,
    });

    if (dirty) await writeDiscoveryState(this.deps.options.dataDir, state);
    this.cache = { key: cacheKey, files };
  }
}
