/**
 * `/api/carriers?name=` in process over an already published FMCSA warehouse (issue 22), without the HTTP layer:
 * `node --import tsx bench/carrier-search-latency.ts <DATA_DIR> [queries=200]`, e.g. the warehouse that
 * `FMCSA_BENCH_SCALE=medium npm run bench -- fmcsa` leaves in data/bench/fmcsa-medium-warehouse. Names are drawn
 * as bench/endpoints.bench.ts draws them (words of legal names, lower-cased, letters and digits, 4+ characters),
 * plus 2-3 letter fragments of them, plus phrases the endpoints bench does not draw: two or three consecutive
 * lettered words of a legal name, and a stretch from inside one word to inside the next (`den truck`). For each,
 * the route's query function (searchCarriers: the name index when the snapshot has one) and the scan it replaces
 * (search-carriers-page.sql, its risk columns left out) run alternately on the same reader, with the index's SQL
 * alone (search-carriers-by-term.sql or -by-phrase.sql, no row columns) between them (4 pooled connections,
 * 1 thread each, as the server). Prints p50 / p99 / max per path, the first (cold) call of each, and
 * searchCarriers' throughput with 8 calls in flight.
 */
import { loadSql } from '../lib/warehouse/duckdb.ts';
import { SnapshotReader } from '../lib/warehouse/reader.ts';
import { searchCarriers } from '../service/carriers/carriers.queries.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: bench/carrier-search-latency.ts <DATA_DIR> [queries]');
const n = Number(process.argv[3] ?? 200);
const scanSql = loadSql('../service/carriers/search-carriers-page.sql', import.meta.url);
const indexSql = loadSql('../service/carriers/search-carriers-by-term.sql', import.meta.url);
const phraseSql = loadSql('../service/carriers/search-carriers-by-phrase.sql', import.meta.url);
const fmcsa = await SnapshotReader.open(dataDir, 'fmcsa', { poolSize: 4, pollMs: 0 });

const time = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const scan = (name: string) => fmcsa.query(scanSql, { dot: null, mc: null, name, state: null, limit: 20, offset: 0 });
const index = (name: string) => searchCarriers(fmcsa, { name, limit: 20 });
const indexSqlOnly = (name: string) =>
  fmcsa.query(/^[a-z0-9]+$/.test(name) ? indexSql : phraseSql, { name, state: null, limit: 20, offset: 0 });
const cold = { index: await time(() => index('eagle')), scan: await time(() => scan('eagle')) };

const rows = await fmcsa.query(
  `SELECT DISTINCT w FROM (SELECT unnest(string_split(legal_name, ' ')) AS w FROM carriers) WHERE NOT regexp_matches(w, '^[0-9]+$') ORDER BY hash(w) LIMIT 600`,
);
const words = [
  ...new Set(
    rows
      .map((r) =>
        String(r.w)
          .toLowerCase()
          .replace(/[^a-z0-9]/g, ''),
      )
      .filter((w) => w.length >= 4),
  ),
];
const fragments = [...new Set(words.flatMap((w) => [w.slice(0, 2), w.slice(1, 4)]))];
const names = (
  await fmcsa.query(`SELECT lower(legal_name) AS n FROM carriers WHERE legal_name IS NOT NULL ORDER BY hash(dot_number) LIMIT 400`)
).map((r) =>
  String(r.n)
    .split(/[^a-z0-9]+/)
    .filter((w) => /[a-z]/.test(w)),
);
const phrases = [
  ...new Set(
    names.flatMap((ws) =>
      ws.length < 2
        ? []
        : [
            ws.slice(0, 2).join(' '),
            ws.slice(-3).join(' '),
            `${ws[0]!.slice(Math.floor(ws[0]!.length / 2))} ${ws[1]!.slice(0, Math.ceil(ws[1]!.length / 2))}`,
          ],
    ),
  ),
];
let seed = 22;
const rnd = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
const pick = (xs: string[]) => xs[Math.floor(rnd() * xs.length)]!;

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(1);
  return { p50_ms: q(0.5), p99_ms: q(0.99), max_ms: s[s.length - 1]!.toFixed(1) };
};
const result: Record<string, unknown> = {
  carriers: (await fmcsa.query(`SELECT count(*)::INTEGER AS n FROM carriers`))[0]!.n,
  words: words.length,
  cold_first_call_ms: { index: cold.index.toFixed(1), scan: cold.scan.toFixed(1) },
};
result.phrases_drawn = phrases.length;
for (const [label, pool, count] of [
  ['words', words, n],
  ['fragments', fragments, n],
  ['phrases', phrases, Number(process.env.BENCH_PHRASES ?? n)],
] as const) {
  const t: { index: number[]; index_sql: number[]; scan: number[] } = { index: [], index_sql: [], scan: [] };
  for (let i = 0; i < count; i++) {
    const name = pick(pool);
    t.index.push(await time(() => index(name)));
    t.index_sql.push(await time(() => indexSqlOnly(name)));
    t.scan.push(await time(() => scan(name)));
  }
  result[label] = { index: stats(t.index), index_sql: stats(t.index_sql), scan: stats(t.scan) };
}
// Throughput of the route's query function with 8 calls in flight for 3 s (words).
let done = 0;
const until = performance.now() + 3000;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (performance.now() < until) {
      await index(pick(words));
      done++;
    }
  }),
);
result.index_words_c8_per_s = Math.round(done / 3);
console.log(JSON.stringify(result, null, 2));
await fmcsa.close();
