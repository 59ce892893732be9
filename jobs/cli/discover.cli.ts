/**
 * `proofline discover <url> [options]` (also `npm run discover -- <url>`; the
 * `proofline` command, jobs/cli/proofline.cli.ts, hands this subcommand's arguments to `main`):
 * runs the AI discovery agent (lib/discovery) against any site and prints a
 * human summary, or the full report with `--json`.
 *
 *   --json                 machine-readable report on stdout
 *   --allow-private        permit loopback/private targets (local development, tests)
 *   --timeout MS           per request (default 10000)
 *   --max-bytes N          largest body read (default 2097152)
 *   --max-redirects N      per request (default 3)
 *   --no-files             find and verify the manifest only
 *   --bookmark-out FILE    write a bookmark pinning what was verified
 *   --reverify FILE        re-verify a bookmark instead (url argument not needed)
 *
 * Exit codes: 0 found and consistent (or `same` / `clean-supersession`);
 * 1 found with integrity problems (hash mismatch, bad signature, page
 * mismatch) or `integrity-issue`; 3 no manifest; 2 usage error or refused target.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  createBookmark,
  discover,
  DiscoveryFetchError,
  formatReport,
  formatReverify,
  reverify,
  type Bookmark,
  type DiscoverOptions,
  type DiscoveryReport,
} from '../../lib/discovery/index.ts';

const USAGE =
  'usage: proofline discover <url> [--json] [--allow-private] [--timeout MS] [--max-bytes N] [--max-redirects N] [--no-files] [--bookmark-out FILE] | --reverify BOOKMARK.json';

function intOpt(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new Error(`--${name} must be a whole number`);
  return Number(v);
}

/** True when the report shows anything that failed verification. */
export function hasIntegrityProblem(r: DiscoveryReport): boolean {
  const verdicts = [r.manifest, ...r.files.map((f) => f.verdict)].filter((v) => v !== null && v !== undefined);
  return (
    verdicts.some((v) => v!.hash.status === 'mismatch' || ['invalid', 'signer-mismatch', 'revoked'].includes(v!.signature.status)) ||
    r.pages.some((p) => p.status === 'mismatch')
  );
}

function parseDiscoverArgs(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      'allow-private': { type: 'boolean', default: false },
      timeout: { type: 'string' },
      'max-bytes': { type: 'string' },
      'max-redirects': { type: 'string' },
      'no-files': { type: 'boolean', default: false },
      'bookmark-out': { type: 'string' },
      reverify: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

export async function main(argv: string[]): Promise<number> {
  const args = argv[0] === 'discover' ? argv.slice(1) : argv;
  let parsed: ReturnType<typeof parseDiscoverArgs>;
  try {
    parsed = parseDiscoverArgs(args);
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  let opts: DiscoverOptions;
  try {
    opts = {
      allowPrivate: values['allow-private'],
      timeoutMs: intOpt(values.timeout, 'timeout'),
      maxBytes: intOpt(values['max-bytes'], 'max-bytes'),
      maxRedirects: intOpt(values['max-redirects'], 'max-redirects'),
      followFiles: !values['no-files'],
    };
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  try {
    if (values.reverify) {
      const bookmark = JSON.parse(await readFile(values.reverify, 'utf8')) as Bookmark;
      const r = await reverify(bookmark, opts);
      console.log(values.json ? JSON.stringify(r, null, 2) : formatReverify(r));
      if (values['bookmark-out']) await writeFile(values['bookmark-out'], JSON.stringify(r.bookmark, null, 2) + '\n');
      return r.verdict === 'integrity-issue' ? 1 : 0;
    }
    if (positionals.length !== 1) {
      console.error(USAGE);
      return 2;
    }
    const report = await discover(positionals[0], opts);
    console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    if (values['bookmark-out'] && report.found)
      await writeFile(values['bookmark-out'], JSON.stringify(createBookmark(report), null, 2) + '\n');
    if (!report.found) return 3;
    return hasIntegrityProblem(report) ? 1 : 0;
  } catch (e) {
    if (e instanceof DiscoveryFetchError) {
      console.error(`${e.code}: ${e.message}${e.code === 'blocked-target' ? ' (use --allow-private for local targets)' : ''}`);
      return 2;
    }
    throw e;
  }
}
