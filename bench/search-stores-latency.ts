/**
 * The search-like routes in process over an already published warehouse (issue 22 item 2), without the HTTP layer:
 * `node --import tsx bench/search-stores-latency.ts <DATA_DIR> [calls=200]`, e.g. the warehouse that
 * `npm run bench -- endpoints --scale=medium` leaves in data/bench/endpoints-medium. For each route function
 * (searchCarriers by a name word, searchRedFlags with the endpoints bench's filters, listSignals by ticker), the
 * packed-store path and the SQL path it replaces (the same reader with the search stores hidden) run alternately on
 * the same snapshot, with parameters drawn as bench/endpoints.bench.ts draws them. Prints p50 / p99 per path and the
 * packed path's answers/s with 8 calls in flight.
 */
import { SnapshotReader } from '../lib/warehouse/reader.ts';
import { searchCarriers, searchRedFlags } from '../service/carriers/carriers.queries.ts';
import { listSignals } from '../service/registry-layers/registry-layers.queries.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: bench/search-stores-latency.ts <DATA_DIR> [calls]');
const n = Number(process.argv[3] ?? 200);
const SEARCH_STORES = ['red_flag_lists', 'red_flag_row', 'carrier_name_hits', 'carrier_by_docket', 'registry_signals'];
const fmcsa = await SnapshotReader.open(dataDir, 'fmcsa', { poolSize: 4, pollMs: 0 });
const registry = await SnapshotReader.open(dataDir, 'registry', { poolSize: 4, pollMs: 0 });
const hidden = (r: SnapshotReader) =>
  Object.create(r, { packed: { value: (name: string) => (SEARCH_STORES.includes(name) ? null : r.packed(name)) } }) as SnapshotReader;

let seed = 22;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const column = async (r: SnapshotReader, sql: string) => (await r.query(sql)).map((x) => String(Object.values(x)[0]));
const words = [
  ...new Set(
    (
      await column(
        fmcsa,
        `SELECT DISTINCT w FROM (SELECT unnest(string_split(legal_name, ' ')) AS w FROM carriers) WHERE NOT regexp_matches(w, '^[0-9]+$') ORDER BY hash(w) LIMIT 600`,
      )
    )
      .map((w) => w.toLowerCase().replace(/[^a-z0-9]/g, ''))
      .filter((w) => w.length >= 4),
  ),
];
const states = await column(fmcsa, `SELECT DISTINCT phy_state FROM carriers WHERE phy_state IS NOT NULL ORDER BY 1`);
const codes = await column(fmcsa, `SELECT DISTINCT unnest(red_flag_codes) AS c FROM carrier_risk ORDER BY 1`);
const tickers = await column(registry, `SELECT DISTINCT ticker FROM signal_hits WHERE ticker IS NOT NULL ORDER BY hash(ticker) LIMIT 400`);

const redFlagQuery = () => {
  const r = rand();
  return r < 0.25 ? {} : r < 0.5 ? { state: pick(states) } : r < 0.75 ? { code: pick(codes) } : { code: pick(codes), state: pick(states) };
};
const routes: Array<[string, (r: SnapshotReader, reg: SnapshotReader) => () => Promise<unknown>]> = [
  [
    'searchCarriers(name)',
    (r) => {
      const name = pick(words);
      return () => searchCarriers(r, { name });
    },
  ],
  [
    'searchRedFlags',
    (r) => {
      const q = redFlagQuery();
      return () => searchRedFlags(r, q);
    },
  ],
  [
    'listSignals(ticker)',
    (_r, reg) => {
      const ticker = pick(tickers);
      return () => listSignals(reg, { ticker });
    },
  ],
];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
for (const [name, make] of routes) {
  const packed: number[] = [];
  const sql: number[] = [];
  for (let i = 0; i < n; i++) {
    for (const [path, r, reg] of [
      ['packed', fmcsa, registry],
      ['sql', hidden(fmcsa), hidden(registry)],
    ] as const) {
      const call = make(r, reg);
      const t = performance.now();
      await call();
      (path === 'packed' ? packed : sql).push(performance.now() - t);
    }
  }
  const t = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() - t < 2000) {
        await make(fmcsa, registry)();
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - t) / 1000);
  console.log(
    `${name.padEnd(22)} packed p50 ${pct(packed, 50).toFixed(2)} p99 ${pct(packed, 99).toFixed(2)} ms | sql p50 ${pct(sql, 50).toFixed(2)} p99 ${pct(sql, 99).toFixed(2)} ms | packed ${Math.round(rate)} answers/s (8 in flight)`,
  );
}
await fmcsa.close();
await registry.close();
