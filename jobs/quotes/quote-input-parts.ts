/**
 * Incremental quotes runs (issue 18, item 6): the parts a parse child wrote for one input file, kept with the
 * snapshot that published them, and reused by the next run when the file did not change.
 *
 * A snapshot of the quotes domain holds `input-parts/<part key of the file>/` per published input: its parts as
 * the child wrote them (`<table>/<part>.parquet`: the folded bars, the chain summary, the line side part, the
 * leaf keys, the file's rejects, corporate actions and origin leaves; hard links, so no bytes are copied) and
 * `input.json` (path, SHA-256, parser version, SHA-256 of the `.meta.json` sidecar that gives the leaves their
 * source URL and fetch time). The `sources` part is not kept: `sources` is cumulative, the row is in every later
 * snapshot already.
 *
 * The plan of the next run (jobs/quotes/quotes.pipeline.ts) takes the files the IncrementalPlanner reuses (same
 * path, SHA-256 and parser as the current snapshot's ledger), checks their saved parts (same SHA-256, parser and
 * sidecar, else the file is parsed after all), and hard-links them into the run's `parts/`: the run's parts are
 * then exactly those a full run would write, so publish and derive run unchanged and every table equals a full
 * run's (test/quotes/quotes-incremental.test.ts). No publish-time carry is involved (`ownParts`).
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../../lib/hash.ts';
import { linkOrCopy, snapshotDir, stagingDir, toPartKey } from '../../lib/warehouse/layout.ts';
import { LEDGER_FILE, STATE_FILE, type IncrementalState, type LedgerEntry } from '../../lib/warehouse/incremental.ts';
import { CHAIN_PARTS, FOLD_PARTS, KEY_PARTS, LINE_PARTS, TAIL_PARTS } from './quotes-fold.ts';

/** Version of what the quote steps make of an input: bump it when parsing or the fold changes (every file is parsed again). */
// quotes-v2 (2026-11-26): a folded input also has its chains' tails part (TAIL_PARTS), which v1 parts lack.
export const QUOTES_PARSER = 'quotes-v2';
export const INPUT_PARTS_DIR = 'input-parts';
/** `input-parts/_sorted/`: quote_bars files of overlapping groups of inputs, sorted at publish (never a part key: those never start with `_`). */
export const SORTED_GROUPS_DIR = '_sorted';
const DOMAIN = 'quotes';

/** What `input.json` of a saved input records. */
export interface SavedInput {
  path: string;
  sha256: string;
  parser: string;
  sidecar_sha256: string | null;
}

/** The (table, part key) pairs a quote child writes for input `rel` (processCsv, processPolygon, writeCorporateActions). */
export function inputPartKeys(rel: string): Array<[string, string]> {
  return [
    [FOLD_PARTS, rel],
    [CHAIN_PARTS, rel],
    [LINE_PARTS, rel],
    [KEY_PARTS, rel],
    [TAIL_PARTS, rel],
    ['quote_corporate_actions', rel],
    ['origin_leaves', `leaves-source-${rel}`],
    ['origin_leaves', `leaves-actions-${rel}`],
    ['rejects', `rejects-${rel}`],
  ];
}

/** SHA-256 of a file's `.meta.json` sidecar, or null without one. */
export async function sidecarSha256(file: string): Promise<string | null> {
  return readFile(`${file}.meta.json`).then(
    (b) => sha256Hex(b),
    () => null,
  );
}

/**
 * At publish (derive): keeps each published input's parts in `<run dir>/input-parts/` (the run directory becomes
 * the snapshot). Inputs are the ledger's (`inputs.json`, written by publish before derive: failed children's
 * inputs are not in it). Returns the number of inputs saved.
 */
export async function saveInputParts(runDir: string): Promise<number> {
  const state = await readFile(path.join(runDir, STATE_FILE), 'utf8').then(
    (t) => JSON.parse(t) as IncrementalState,
    () => null,
  );
  const ledger = await readFile(path.join(runDir, LEDGER_FILE), 'utf8').then(
    (t) => (JSON.parse(t) as { inputs: LedgerEntry[] }).inputs,
    () => null,
  );
  if (!state || !ledger) return 0;
  const quotesDir = path.join(state.input_dir, DOMAIN);
  let saved = 0;
  for (const e of ledger) {
    if (!e.path.startsWith(`${DOMAIN}/`)) continue;
    const rel = path.relative(quotesDir, path.join(state.input_dir, e.path));
    const dir = path.join(runDir, INPUT_PARTS_DIR, toPartKey(rel));
    let any = false;
    for (const [table, key] of inputPartKeys(rel)) {
      const from = path.join(runDir, 'parts', table, `${toPartKey(key)}.parquet`);
      const to = path.join(dir, table, `${toPartKey(key)}.parquet`);
      await mkdir(path.dirname(to), { recursive: true });
      try {
        await linkOrCopy(from, to);
        any = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        await rm(path.dirname(to), { recursive: true, force: true }).catch(() => undefined);
      }
    }
    if (!any) {
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    const info: SavedInput = {
      path: rel,
      sha256: e.sha256,
      parser: e.parser,
      sidecar_sha256: await sidecarSha256(path.join(quotesDir, rel)),
    };
    await writeFile(path.join(dir, 'input.json'), `${JSON.stringify(info)}\n`);
    saved++;
  }
  return saved;
}

/** The saved parts of input `rel` in a snapshot, when they match the file now (SHA-256, parser, sidecar). */
export async function savedInputParts(
  dataDir: string,
  snapshotId: string,
  rel: string,
  want: { sha256: string; sidecar_sha256: string | null },
): Promise<string | null> {
  const dir = path.join(snapshotDir(dataDir, DOMAIN, snapshotId), INPUT_PARTS_DIR, toPartKey(rel));
  const info = await readFile(path.join(dir, 'input.json'), 'utf8').then(
    (t) => JSON.parse(t) as SavedInput,
    () => null,
  );
  if (!info || info.path !== rel || info.sha256 !== want.sha256 || info.parser !== QUOTES_PARSER) return null;
  if (info.sidecar_sha256 !== want.sidecar_sha256) return null;
  return dir;
}

/**
 * Links the previous snapshot's sorted files of the group `prefix` into `dir` (in key order); null when it has none.
 */
export async function linkSortedGroup(dataDir: string, snapshotId: string, prefix: string, dir: string): Promise<string[] | null> {
  const from = path.join(snapshotDir(dataDir, DOMAIN, snapshotId), INPUT_PARTS_DIR, SORTED_GROUPS_DIR);
  let names: string[];
  try {
    names = await readdir(from);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  // A group's files are `<prefix>-NNNNN.parquet` (sortedGroupFiles); an older snapshot's single `<prefix>.parquet` is
  // not reused (the group is sorted again into bounded files).
  const mine = names.filter((n) => n.startsWith(`${prefix}-`) && /-\d{5}\.parquet$/.test(n)).sort();
  if (mine.length === 0) return null;
  const out: string[] = [];
  for (const n of mine) {
    await linkOrCopy(path.join(from, n), path.join(dir, n));
    out.push(path.join(dir, n));
  }
  return out;
}

/** Hard-links a saved input's parts into the run's `parts/` (the layout the child would have written). */
export async function linkInputParts(dataDir: string, runId: string, savedDir: string): Promise<void> {
  const parts = path.join(stagingDir(dataDir, DOMAIN, runId), 'parts');
  for (const table of await readdir(savedDir, { withFileTypes: true })) {
    if (!table.isDirectory()) continue;
    await mkdir(path.join(parts, table.name), { recursive: true });
    for (const f of await readdir(path.join(savedDir, table.name)))
      await linkOrCopy(path.join(savedDir, table.name, f), path.join(parts, table.name, f));
  }
}
