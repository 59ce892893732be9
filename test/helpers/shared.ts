/**
 * Access to the real public fixtures in ../shared/fixtures. Suites that read
 * them skip when the folder is absent, except under REQUIRE_SHARED=1 (CI),
 * where a missing folder is a failure.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHARED_DIR = process.env.PROOFLINE_SHARED_DIR ?? path.resolve(REPO_ROOT, '..', 'shared');
export const FIXTURES = path.join(SHARED_DIR, 'fixtures');
export const HAS_SHARED = existsSync(FIXTURES);

if (!HAS_SHARED && process.env.REQUIRE_SHARED === '1') {
  throw new Error(`REQUIRE_SHARED=1 but ${FIXTURES} does not exist`);
}
if (!HAS_SHARED) console.warn(`[proofline tests] ${FIXTURES} not found: suites on real fixtures are skipped`);

/** Absolute path of a fixture file, e.g. fixture('sec/tickers/company_tickers.json'). */
export function fixture(rel: string): string {
  return path.join(FIXTURES, rel);
}
