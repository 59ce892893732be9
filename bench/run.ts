/**
 * `npm run bench [-- name ...]`: runs each benchmark script in its own child
 * process (so peak RSS is per benchmark) and lists the result files written
 * to bench/results/. A name filter runs only the matching benchmarks.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** Every benchmark, in run order: one line each. */
export const benches: string[] = [
  'workers', // BullMQ ingest with 1, 2 and 4 worker processes (bench/workers.bench.ts)
  'fmcsa', // FMCSA full-scale ingest vs DuckDB alone, risk snapshot serving (bench/fmcsa.bench.ts)
  'api', // read API: identity card vs bare node:http, search, quote (bench/api.bench.ts)
  'discovery', // /.well-known/ai build, serving, tier-3 verification, full agent run (bench/discovery.bench.ts)
  'hostile', // honest care writers while a hostile writer repeats unhashable and 100 MB bodies; server RSS (bench/hostile.bench.ts)
  'vet', // durable writes over HTTP: POST /api/vet and POST /api/care/{id}/event, store-only appends (bench/vet.bench.ts)
  'vet-postgres', // the same with the PostgreSQL state store: 1 and 2 API processes vs pgbench plain SQL (bench/vet-postgres.bench.ts)
  'registry', // full-scale EDGAR sample ingested in process: time, rows/s, peak RSS (bench/registry.bench.ts)
  'webhooks', // change detection between two FMCSA snapshots (1 M carriers, 100k watched by default), deliveries/s (bench/webhooks.bench.ts)
  'quotes', // 8,000 tickers × 10 years of daily bars (~20M rows) ingested with origin chains (bench/quotes.bench.ts)
  'endpoints', // every GET route of /openapi.json and every MCP read tool, cold and warm; --scale small|medium|full (bench/endpoints.bench.ts)
  'quotes-incremental', // quotes nights: full, one file changed, no change (parts reused), medium scale (bench/quotes-incremental.bench.ts)
  'nightly', // incremental registry nights: full run, a 1 % next day, no change; --full for 8,200 companies (bench/nightly.bench.ts)
];

const here = path.dirname(fileURLToPath(import.meta.url));
// Names select benchmarks; `--flags` are passed to each selected benchmark (`npm run bench -- nightly --full`).
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
// A filter that names a benchmark exactly selects that one only (`quotes` is not also `quotes-incremental`); any other
// filter selects every benchmark whose name contains it.
const selected = benches.filter((b) => filters.length === 0 || filters.some((f) => (benches.includes(f) ? b === f : b.includes(f))));
if (selected.length === 0) console.log(`no benchmark matches ${filters.join(' ')}; known: ${benches.join(', ')}`);
let failed = 0;
for (const b of selected) {
  console.log(`\n=== bench ${b}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, `${b}.bench.ts`), ...flags], {
    stdio: 'inherit',
    env: process.env,
  });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
