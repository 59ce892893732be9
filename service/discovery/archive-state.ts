/**
 * Persistent state of the discovery publisher, kept in
 * DATA_DIR/state/discovery-archive.json so the archive survives restarts:
 * per published path the fingerprint of its content, its contentHash, the
 * time that content was first published, and every archive record ever made.
 * A new record (with `supersedes` = the previous versionId) is appended
 * whenever a path's contentHash changes. Writes are atomic (temp file + rename).
 * One API process owns the file; several processes sharing DATA_DIR may each
 * append a record for the same change (the versionIds stay unique).
 */
import { mkdir, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../lib/warehouse/snapshot.ts';

export interface PublishedResourceState {
  fingerprint: string;
  contentHash: string;
  /** When this content was first published (the document's `generated`). */
  generated: string;
  versionId: string;
  seq: number;
  signedBy: string | null;
  signedAt: string;
}

export interface ArchiveRecordOut {
  versionId: string;
  resource: string;
  contentHash: string;
  publishedAt: string;
  signedAt: string;
  assertionType: string;
  supersedes?: string;
  summary: string;
}

export interface DiscoveryState {
  version: 1;
  resources: Record<string, PublishedResourceState>;
  records: ArchiveRecordOut[];
  /** Service version → when this instance first served it (the release feed item's date). */
  releases: Record<string, string>;
}

export function statePath(dataDir: string): string {
  return path.join(dataDir, 'state', 'discovery-archive.json');
}

/**
 * Reads the state; a missing file is a fresh start. An unreadable one (never
 * produced by our atomic writes, but possible after manual edits) is moved
 * aside to `<file>.corrupt-<time>` so its lineage can be recovered by hand,
 * and publishing starts a new lineage (`onCorrupt` is told where it went).
 */
export async function readDiscoveryState(dataDir: string, onCorrupt?: (movedTo: string) => void): Promise<DiscoveryState> {
  const file = statePath(dataDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, resources: {}, records: [], releases: {} };
    throw e;
  }
  try {
    const s = JSON.parse(text) as DiscoveryState;
    if (s.version === 1 && s.resources && Array.isArray(s.records)) return { ...s, releases: s.releases ?? {} };
  } catch {
    /* handled below */
  }
  const aside = `${file}.corrupt-${Date.now()}`;
  await rename(file, aside);
  onCorrupt?.(aside);
  return { version: 1, resources: {}, records: [], releases: {} };
}

export async function writeDiscoveryState(dataDir: string, state: DiscoveryState): Promise<void> {
  await mkdir(path.dirname(statePath(dataDir)), { recursive: true });
  await writeFileAtomic(statePath(dataDir), JSON.stringify(state, null, 1) + '\n');
}

/** Slug used in versionIds: "/ai/knowledge.json" → "ai-knowledge". */
export function resourceSlug(resource: string): string {
  return (
    resource
      .replace(/^\/+/, '')
      .replace(/\.json$/, '')
      .replace(/^\.well-known\//, '')
      .replace(/[^a-zA-Z0-9]+/g, '-') || 'root'
  );
}
