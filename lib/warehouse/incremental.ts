/**
 * Incremental runs (issue 18, item 6): an input whose SHA-256 and parser version equal those recorded by the
 * current snapshot is not parsed again; its rows are carried from the previous snapshot into the new one, and
 * an input no longer present drops its rows.
 *
 * The ledger: every snapshot published by an incremental domain holds `inputs.json` beside its manifest, one
 * entry per input it covers (path relative to the input directory, SHA-256, size, mtime, parser version).
 * Planning compares the inputs on disk with it (`IncrementalPlanner.partition`): a file whose path, size and
 * mtime equal its entry takes the recorded SHA-256 without being read (a stat cache, as git's index does);
 * any other file is hashed. A file is reused when path, SHA-256 and parser equal the entry's.
 *
 * Rows are attributed to inputs by content: every carried table names the SHA-256 of the input its row came
 * from (`content_sha256`), or an origin leaf (`origin_leaf_hash`) whose `content_sha256` does (lib/origin.ts).
 * Publish (lib/warehouse/publish.ts, `carry`) keeps the previous rows of the reused SHA-256 set and adds the
 * run's parts. A SHA-256 is reused only when every previous path with that content is reused, so two files
 * with the same bytes (one changed or removed) never carry stale rows: the unchanged one is parsed again.
 *
 * Part reuse (`Pipeline.incremental.reuseParts`, the FMCSA pipeline): for a pipeline whose children write one
 * set of parts per input (each part holding the rows of that one input only), the child records those parts
 * (`StagingRun.recordInputParts`), the ledger entry lists them (`parts`), and the snapshot keeps its `parts/`
 * directory. A reused input's previous parts are hard-linked into the new run before any child runs
 * (`linkReusedParts`), so publish is an ordinary full publish over old and new parts alike: every table, the
 * derived ones included, is what a full run over the same inputs gives, and the reused inputs' rejects come
 * with their parts. An entry without `parts` (parsed by older code, or its parts not recorded) is parsed again.
 */
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { hashFile } from '../hash.ts';
import { linkOrCopy, snapshotDir } from './layout.ts';
import type { SnapshotManifest } from './snapshot.ts';

/** One input covered by a snapshot. */
export interface LedgerEntry {
  /** Relative to the run's input directory, '/'-separated. */
  path: string;
  /** Empty in a plan's entry not hashed at plan (part reuse: a new or resized file); never in a published ledger. */
  sha256: string;
  bytes: number;
  mtime_ms: number;
  /** The pipeline's parser version when the input was parsed (a bump re-parses everything). */
  parser: string;
  /**
   * Part reuse only: the parts holding this input's rows, as `<table>/<file>.parquet` under the snapshot's
   * `parts/` (cumulative tables, `sources` and `origin_leaves`, are not listed: their rows stay in the table).
   */
  parts?: string[];
}

/** What a child of a part-reusing pipeline records about one parsed input (see `StagingRun.recordInputParts`). */
export interface InputParts {
  /** Relative to the run's input directory, '/'-separated (the ledger's path). */
  path: string;
  /** SHA-256 and size of the bytes the child parsed. */
  sha256: string;
  bytes?: number;
  parts: string[];
}

/** Directory of a staging run (and, once published, of a snapshot) holding the children's `InputParts` records. */
export const INPUT_PARTS_DIR = 'input-parts';

/** What the plan hands to publish through the run directory (`incremental.json`). */
export interface IncrementalState {
  parser: string;
  input_dir: string;
  /** False when the previous snapshot has no ledger (or there is none): the run is a full one. */
  carry: boolean;
  /** Every local input of this run, reused or parsed. */
  ledger: LedgerEntry[];
  /** SHA-256 of the reused inputs: their previous rows are carried. */
  reuse_sha256: string[];
  /** Reused inputs, absolute and relative: their previous rejects are carried. */
  reuse_files: string[];
  /** Files the run's fetch jobs write: hashed at publish and added to the ledger. */
  fetched_outputs: string[];
  /** Part reuse: previous parts of the reused inputs (`<table>/<file>`), linked into the run by `linkReusedParts`. */
  reuse_parts?: string[];
  counts: IncrementalCounts;
}

export interface IncrementalCounts {
  /** Inputs parsed by this run: new or changed local files, and every file its fetch jobs write. */
  parsed: number;
  reused: number;
  removed: number;
}

/** File name of the ledger inside a snapshot (and of the state inside a staging run). */
export const LEDGER_FILE = 'inputs.json';
export const STATE_FILE = 'incremental.json';

/** The ledger of a snapshot, or null when it has none (published by a full run of older code). */
export async function readLedger(dataDir: string, domain: string, manifest: SnapshotManifest | null): Promise<LedgerEntry[] | null> {
  if (!manifest) return null;
  try {
    const parsed = JSON.parse(await readFile(path.join(snapshotDir(dataDir, domain, manifest.snapshot_id), LEDGER_FILE), 'utf8'));
    return Array.isArray(parsed?.inputs) ? (parsed.inputs as LedgerEntry[]) : null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

function relPath(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

/**
 * Splits a plan's inputs into those to parse and those reused, and collects the ledger of the run.
 * One planner per run; `partition` may be called once per input kind (each file at most once).
 */
export class IncrementalPlanner {
  private readonly previous: Map<string, LedgerEntry>;
  private readonly entries = new Map<string, LedgerEntry>();
  /** Candidates for reuse (path → entry); confirmed in `finish` once every path of a SHA-256 is known. */
  private readonly candidates = new Map<string, { file: string; entry: LedgerEntry }>();
  private readonly parsedFiles = new Set<string>();
  private readonly byFile = new Map<string, LedgerEntry>();

  /**
   * `opts.parts`: part reuse (see the module comment): only an entry that lists its parts, each present in
   * `opts.partsDir` (the previous snapshot's `parts/`), can be reused, and the state names the parts to link.
   */
  constructor(
    readonly inputDir: string,
    readonly parser: string,
    previous: LedgerEntry[] | null,
    private readonly opts: { parts?: boolean; partsDir?: string } = {},
  ) {
    this.previous = new Map((previous ?? []).map((e) => [e.path, e]));
  }

  /** Size and mtime (ms, floored) of a file passed to `partition`, as stat'ed there; undefined for any other file. */
  statOf(file: string): { bytes: number; mtime_ms: number } | undefined {
    const e = this.byFile.get(file);
    return e ? { bytes: e.bytes, mtime_ms: e.mtime_ms } : undefined;
  }

  /** The ledger entry of a file passed to `partition` (its SHA-256 as recorded or hashed), or undefined. */
  entryOf(file: string): LedgerEntry | undefined {
    return this.byFile.get(file);
  }

  /** Paths (relative to the input directory) the previous ledger records. */
  previousPaths(): string[] {
    return [...this.previous.keys()];
  }

  /** Whether there is a previous ledger to reuse from. */
  get hasPrevious(): boolean {
    return this.previous.size > 0;
  }

  private async entryFor(file: string): Promise<LedgerEntry> {
    const rel = relPath(this.inputDir, file);
    const st = await stat(file);
    const mtime = Math.floor(st.mtimeMs);
    const prev = this.previous.get(rel);
    if (prev && prev.bytes === st.size && prev.mtime_ms === mtime) {
      const { parts: _parts, ...known } = prev;
      return { ...known, parser: this.parser };
    }
    // Part reuse: a new path, or one whose size changed, is parsed whatever its bytes; parts are per path, so its
    // SHA-256 is not needed to plan and is taken from its child's record at publish (no second read here: at
    // full FMCSA scale, hashing every file in the plan cost more than 10 s under load).
    if (this.opts.parts && (!prev || prev.bytes !== st.size))
      return { path: rel, sha256: '', bytes: st.size, mtime_ms: mtime, parser: this.parser };
    const { sha256 } = await hashFile(file);
    return { path: rel, sha256, bytes: st.size, mtime_ms: mtime, parser: this.parser };
  }

  /**
   * Records `files` in the run's ledger. A file is reusable when the previous ledger has the same path,
   * SHA-256 and parser; whether it is finally reused is decided per SHA-256 once all inputs are known
   * (`settle`).
   */
  async partition(files: string[], parallel = 64): Promise<void> {
    for (let i = 0; i < files.length; i += parallel) {
      await Promise.all(
        files.slice(i, i + parallel).map(async (file) => {
          const entry = await this.entryFor(file);
          this.entries.set(entry.path, entry);
          this.byFile.set(file, entry);
          const prev = this.previous.get(entry.path);
          const reusable =
            prev && prev.sha256 === entry.sha256 && prev.parser === this.parser && (!this.opts.parts || (await this.partsPresent(prev)));
          if (reusable) this.candidates.set(entry.path, { file, entry });
          else this.parsedFiles.add(file);
        }),
      );
    }
  }

  /** Part reuse: whether the entry lists its parts and each is still in the previous snapshot (else the input is parsed again). */
  private async partsPresent(prev: LedgerEntry): Promise<boolean> {
    if (!Array.isArray(prev.parts) || !this.opts.partsDir) return false;
    for (const rel of prev.parts) {
      const st = await stat(path.join(this.opts.partsDir, ...rel.split('/'))).catch(() => null);
      if (!st?.isFile()) return false;
    }
    return true;
  }

  /** SHA-256 values some previous path had that is now changed, removed, or parsed with another parser. */
  private unsafeShas(): Set<string> {
    const unsafe = new Set<string>();
    for (const prev of this.previous.values()) {
      const now = this.entries.get(prev.path);
      if (!now || now.sha256 !== prev.sha256 || prev.parser !== this.parser) unsafe.add(prev.sha256);
    }
    return unsafe;
  }

  /**
   * The files to parse, once every input was passed to `partition`: the new and changed ones, those passed to
   * `require`, and reusable ones sharing a SHA-256 with any of those or with a previous path that changed or
   * went (see the module comment). May be called again after `require`.
   */
  settle(): Set<string> {
    const unsafe = this.unsafeShas();
    for (;;) {
      for (const f of this.parsedFiles) {
        const e = this.byFile.get(f);
        if (e) unsafe.add(e.sha256);
      }
      let grew = false;
      for (const { file, entry } of this.candidates.values()) {
        if (!this.parsedFiles.has(file) && unsafe.has(entry.sha256)) {
          this.parsedFiles.add(file);
          grew = true;
        }
      }
      if (!grew) return this.parsedFiles;
    }
  }

  /**
   * Marks files as parsed by this run although unchanged: inputs parsed together with a changed one (a
   * transcript of several files, a file another one's rows depend on). Call `settle` afterwards.
   */
  require(files: Iterable<string>): void {
    for (const f of files) this.parsedFiles.add(f);
  }

  /** What publish needs (written to the run directory by the plan stage). */
  state(fetchedOutputs: string[] = []): IncrementalState {
    const parse = this.settle();
    const reuseSha = new Set<string>();
    const reuseFiles: string[] = [];
    const reuseParts: string[] = [];
    const ledger = new Map(this.entries);
    let reused = 0;
    for (const [rel, { file, entry }] of this.candidates) {
      if (parse.has(file)) continue;
      reused++;
      reuseSha.add(entry.sha256);
      reuseFiles.push(file, rel);
      // Part reuse: the reused entry keeps its parts (linked into this run, kept by the new snapshot).
      const parts = this.opts.parts ? this.previous.get(rel)?.parts : undefined;
      if (parts) {
        reuseParts.push(...parts);
        ledger.set(rel, { ...entry, parts });
      }
    }
    const fetchedRel = new Set(fetchedOutputs.map((f) => relPath(this.inputDir, f)));
    // A previous input the run fetches again is re-parsed from the new bytes, not removed.
    const removed = [...this.previous.keys()].filter((p) => !this.entries.has(p) && !fetchedRel.has(p)).length;
    return {
      parser: this.parser,
      input_dir: this.inputDir,
      carry: this.hasPrevious,
      ledger: [...ledger.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      reuse_sha256: [...reuseSha].sort(),
      reuse_files: reuseFiles.sort(),
      fetched_outputs: fetchedOutputs,
      ...(this.opts.parts ? { reuse_parts: [...new Set(reuseParts)].sort() } : {}),
      counts: { parsed: parse.size + fetchedOutputs.length, reused, removed },
    };
  }
}

/**
 * The ledger a snapshot records: the plan's entries plus the files its fetch jobs wrote (hashed now; a fetch
 * output the source did not have is absent), less `exclude` (inputs of failed children, whose rows were not
 * published: the next run parses them again). Fetched files are inputs of the next run like any other.
 * `parsedParts` (part reuse): the records of this run's children; an entry takes the parts of the record with its
 * path and SHA-256 (bytes that changed between plan and parse leave it without parts: parsed again next run).
 */
export async function completeLedger(
  state: IncrementalState,
  exclude: string[] = [],
  parsedParts: InputParts[] = [],
): Promise<LedgerEntry[]> {
  const byPath = new Map(state.ledger.map((e) => [e.path, e]));
  const excluded = new Set(exclude.map((f) => relPath(state.input_dir, f)));
  const recorded = new Map(parsedParts.map((r) => [r.path, r]));
  for (const file of state.fetched_outputs) {
    const st = await stat(file).catch(() => null);
    if (!st?.isFile()) continue;
    const rel = relPath(state.input_dir, file);
    // A fetched file its child recorded (part reuse) is not read again: the child hashed the bytes it parsed.
    const rec = recorded.get(rel);
    const sha256 = rec?.bytes === st.size ? rec.sha256 : (await hashFile(file)).sha256;
    byPath.set(rel, { path: rel, sha256, bytes: st.size, mtime_ms: Math.floor(st.mtimeMs), parser: state.parser });
  }
  for (const rel of excluded) byPath.delete(rel);
  for (const rec of parsedParts) {
    const e = byPath.get(rec.path);
    // An entry planned without its SHA-256 (part reuse: a new or resized file) takes the one its child read.
    if (e && (e.sha256 === rec.sha256 || e.sha256 === '') && !e.parts)
      byPath.set(rec.path, { ...e, sha256: rec.sha256, parts: [...rec.parts].sort() });
  }
  // An input whose bytes nobody hashed (its child recorded nothing) is left out: the next run parses it.
  return [...byPath.values()].filter((e) => e.sha256 !== '').sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The `InputParts` records of a staging run (written by its children). */
export async function readInputParts(runDir: string): Promise<InputParts[]> {
  const dir = path.join(runDir, INPUT_PARTS_DIR);
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: InputParts[] = [];
  for (const n of names.sort()) if (n.endsWith('.json')) out.push(JSON.parse(await readFile(path.join(dir, n), 'utf8')) as InputParts);
  return out;
}

/**
 * Part reuse: hard-links the previous snapshot's parts of the reused inputs (`state.reuse_parts`) into the run's
 * `parts/` (copied where linking is impossible). A part missing from the previous snapshot is an error: the run
 * would otherwise publish without an input's rows.
 */
export async function linkReusedParts(previousSnapshotDir: string, runDir: string, parts: string[]): Promise<void> {
  for (const rel of parts) {
    const [table, file, ...rest] = rel.split('/');
    if (!table || !file || rest.length || !/^[a-zA-Z0-9_]+$/.test(table) || file.includes('..'))
      throw new Error(`ledger names an invalid part: ${rel}`);
    const from = path.join(previousSnapshotDir, 'parts', table, file);
    const to = path.join(runDir, 'parts', table, file);
    await mkdir(path.dirname(to), { recursive: true });
    await linkOrCopy(from, to);
  }
}
