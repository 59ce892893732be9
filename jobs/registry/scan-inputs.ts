/**
 * Fast input scanning for the registry plan. The full sample holds ~84,000
 * files in ~35,000 EDGAR-style folders (`{cik}/{accession}/`); walking them
 * one `readdir` and one `stat` at a time took ~45 s of the plan on a busy
 * 2-core machine. Same results and digest as `listInputs`/`digestInputs`
 * (jobs/inputs.ts), with directories read and stats issued in parallel.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { hashCanonical } from '../../lib/hash.ts';

/**
 * Files under `dir` whose path relative to `dir` matches `pattern`, sorted; `.meta.json` sidecars excluded. The tree
 * is walked level by level with up to `parallel` directories read at once (1.3-1.8x faster than one recursive
 * `readdir` over the ~10,000 folders of the medium sample); symbolic links are not followed, as before.
 */
export async function scanInputs(dir: string, pattern: RegExp = /.*/, parallel = 128): Promise<string[]> {
  const out: string[] = [];
  let level = [dir];
  while (level.length) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += parallel) {
      await Promise.all(
        level.slice(i, i + parallel).map(async (d) => {
          const entries = await readdir(d, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
            // A missing input folder is an empty one (as the recursive readdir's catch had it).
            if (d === dir) return [];
            throw e;
          });
          for (const e of entries) {
            const full = path.join(d, e.name);
            if (e.isDirectory()) next.push(full);
            else if (e.isFile() && !e.name.endsWith('.meta.json') && pattern.test(path.relative(dir, full))) out.push(full);
          }
        }),
      );
    }
    level = next;
  }
  return out.sort();
}

/**
 * The digest `digestInputs` computes (relative path, size, mtime per file), with stats in parallel. `known` gives
 * the size and mtime already stat'ed for a file (the incremental planner's), so a file is not stat'ed twice.
 */
export async function digestScanned(
  root: string,
  files: string[],
  extra: unknown = null,
  known?: (file: string) => { bytes: number; mtime_ms: number } | undefined,
  parallel = 256,
): Promise<string> {
  const parts: Array<[string, number, number]> = new Array(files.length);
  for (let i = 0; i < files.length; i += parallel) {
    await Promise.all(
      files.slice(i, i + parallel).map(async (f, k) => {
        const seen = known?.(f);
        if (seen) {
          parts[i + k] = [path.relative(root, f), seen.bytes, seen.mtime_ms];
          return;
        }
        const st = await stat(f);
        parts[i + k] = [path.relative(root, f), st.size, Math.floor(st.mtimeMs)];
      }),
    );
  }
  return hashCanonical({ files: parts, extra });
}
