/**
 * `proofline docs-tables` (alias `npm run docs:tables`) rewrites the docs' generated tables (the risk-rule table
 * in docs/fmcsa-risk-model.md, the configuration table in docs/configuration.md)
 * from the code; `npm run docs:tables -- --check` changes nothing and exits 1
 * naming every table that is out of date (test/docs/generated-tables.test.ts
 * makes the same check).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkGeneratedTables, writeGeneratedTables } from '../docs-tables.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function runDocsTables(opts: { check?: boolean }): Promise<number> {
  if (opts.check) {
    const stale = (await checkGeneratedTables(root)).filter((c) => c.actual !== c.expected);
    for (const c of stale) {
      console.error(
        `${c.table.file}: table "${c.table.name}" ${c.actual === null ? 'has no marker pair' : 'is out of date'} (source: ${c.table.source})`,
      );
    }
    if (stale.length > 0) {
      console.error('run `npm run docs:tables` and commit the result');
      return 1;
    }
    console.log('generated tables are up to date');
    return 0;
  }
  const changed = await writeGeneratedTables(root);
  console.log(changed.length ? `rewrote ${changed.join(', ')}` : 'generated tables are up to date');
  return 0;
}
