/**
 * Backfill of a new warehouse from the SEC's nightly bulk archives: `submissions.zip` (every CIK's submissions
 * JSON and overflow pages) and `companyfacts.zip` (every CIK's companyfacts), each of the order of gigabytes.
 *
 * The archive is read as a stream straight from the HTTP response through a streaming unzip: never written whole
 * to disk, never held whole in memory. Only the entries of the universe's CIKs are kept, each written (with its
 * sidecar naming the archive and entry) under `<inputDir>/sec/{submissions,companyfacts}/` the moment the entry
 * ends; one entry (a few MB at most) is the most held in memory. The request goes through the shared SEC limiter.
 *
 * Resumable after a kill at any point: an entry is on disk whole or not at all (jobs/fetched-file.ts), a rerun
 * skips writing entries already on disk from the same archive (its ETag / Last-Modified in their sidecar), and an
 * archive read to its end is recorded in `<inputDir>/sec/backfill-state.json`, so a rerun does not download it
 * again while the SEC serves the same one (a conditional GET). A body cut short (the stream ends before the
 * archive's central directory) is an error naming the archive and the byte position reached; what was written
 * before is whole and kept.
 *
 * The filing documents of the last N years then come through the daily-index path (jobs/registry/edgar-daily.ts)
 * from `--since`, which is resumable in the same way (indexes and filings on disk are never fetched again).
 */
import { readFileSync, statSync } from 'node:fs';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Unzip, UnzipInflate } from 'fflate';
import { ParseError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { padCik } from '../../ingest/edgar/cik.ts';
import { writeFetchedFile } from '../fetched-file.ts';
import type { EdgarClient } from './edgar-client.ts';

export type BulkKind = 'submissions' | 'companyfacts';

/** Where the SEC publishes each archive (rebuilt nightly). */
export const BULK_PATHS: Record<BulkKind, string> = {
  submissions: '/Archives/edgar/daily-index/bulkdata/submissions.zip',
  companyfacts: '/Archives/edgar/daily-index/xbrl/companyfacts.zip',
};

export interface BulkReport {
  kind: BulkKind;
  url: string;
  /** 304: the archive recorded as done is still the one served. */
  unchanged: boolean;
  entries_seen: number;
  written: number;
  kept: number;
  bytes_read: number;
}

interface BackfillState {
  [kind: string]: { url: string; etag: string | null; last_modified: string | null; done_at: string; entries_seen: number };
}

/** Whether `file` is on disk whole and came from the archive `archiveId` (synchronous: see the unzip callback). */
function wholeFromArchiveSync(file: string, archiveId: string): boolean {
  try {
    const meta = JSON.parse(readFileSync(`${file}.meta.json`, 'utf8')) as { archive_id?: string; bytes?: number };
    return meta.archive_id === archiveId && statSync(file).size === meta.bytes;
  } catch {
    return false;
  }
}

const ENTRY = /^CIK(\d{10})(-submissions-\d{3})?\.json$/;

async function readState(file: string): Promise<BackfillState> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as BackfillState;
  } catch {
    return {};
  }
}

/** Streams one bulk archive and keeps the entries of `universe` (null: every CIK). */
export async function backfillBulkArchive(
  client: EdgarClient,
  kind: BulkKind,
  opts: { inputDir: string; universe: Set<number> | null; log: Logger; signal?: AbortSignal },
): Promise<BulkReport> {
  const secDir = path.join(opts.inputDir, 'sec');
  const stateFile = path.join(secDir, 'backfill-state.json');
  const state = await readState(stateFile);
  const done = state[kind];
  const headers: Record<string, string> = {};
  if (done?.etag) headers['if-none-match'] = done.etag;
  if (done?.last_modified) headers['if-modified-since'] = done.last_modified;
  const url = client.www.url(BULK_PATHS[kind]);
  const res = await client.www.openStream(BULK_PATHS[kind], { headers, signal: opts.signal });
  const report: BulkReport = { kind, url, unchanged: res.status === 304, entries_seen: 0, written: 0, kept: 0, bytes_read: 0 };
  if (res.status === 304) return report;
  const etag = res.headers.get('etag');
  const lastModified = res.headers.get('last-modified');
  const archiveId = etag ?? lastModified ?? null;

  const writes: Promise<void>[] = [];
  let failure: unknown = null;
  const unzip = new Unzip((member) => {
    const name = path.basename(member.name);
    const m = ENTRY.exec(name);
    if (!m) return;
    report.entries_seen++;
    const cik = Number(m[1]);
    if (opts.universe && !opts.universe.has(cik)) return;
    const file = path.join(secDir, kind, name);
    // fflate needs start() within this callback (data pushed before it would be lost): decide synchronously.
    // An entry of this very archive already whole on disk (a rerun after a kill) is not written again.
    if (archiveId && wholeFromArchiveSync(file, archiveId)) {
      report.kept++;
      return;
    }
    const chunks: Uint8Array[] = [];
    // The write is queued only once the entry ended: an entry the stream cut mid-way is never written nor waited for.
    const write = async () => {
      const canonical =
        kind === 'submissions'
          ? `https://data.sec.gov/submissions/${name}`
          : `https://data.sec.gov/api/xbrl/companyfacts/CIK${padCik(cik)}.json`;
      await writeFetchedFile(file, Buffer.concat(chunks), (h) => ({
        source_url: canonical,
        retrieved_at: res.retrieved_at,
        sha256: h.sha256,
        bytes: h.bytes,
        archive: url,
        archive_entry: member.name,
        archive_id: archiveId,
      }));
      report.written++;
    };
    member.ondata = (err, chunk, final) => {
      if (err) {
        failure ??= err;
        return;
      }
      chunks.push(chunk);
      if (final)
        writes.push(
          write().catch((e) => {
            failure ??= e;
          }),
        );
    };
    member.start();
  });
  unzip.register(UnzipInflate);
  let sawEnd = false;
  let tail = Buffer.alloc(0);
  for await (const chunk of res.body) {
    report.bytes_read += chunk.byteLength;
    tail = Buffer.concat([tail, Buffer.from(chunk)]).subarray(-65_557);
    unzip.push(chunk);
    // Let entry writes run between chunks: memory stays bounded by the entry being read.
    await new Promise((r) => setImmediate(r));
  }
  sawEnd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06])) >= 0;
  if (!sawEnd) {
    await Promise.all(writes);
    throw new ParseError(
      `${url}: archive cut short at byte ${report.bytes_read} (no end of central directory); ${report.written} entries written are whole, rerun to continue`,
      { file: url, position: report.bytes_read },
    );
  }
  unzip.push(new Uint8Array(0), true);
  await Promise.all(writes);
  if (failure) throw failure;
  state[kind] = { url, etag, last_modified: lastModified, done_at: new Date().toISOString(), entries_seen: report.entries_seen };
  await mkdir(secDir, { recursive: true });
  await writeFile(stateFile, JSON.stringify(state, null, 2));
  opts.log.info(report, 'EDGAR bulk archive read');
  return report;
}
