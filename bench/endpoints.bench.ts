/**
 * Every read route, cold and warm (issue 22 item 1): each GET route of the
 * served `/openapi.json` and each read-only MCP tool (`tools/list`,
 * `readOnlyHint`), against a warehouse of all four domains (registry, fmcsa,
 * quotes, transcripts) generated and ingested at `--scale` (small | medium |
 * full; default medium). Parameters are drawn at random from the warehouse:
 * real tickers, DOTs, VINs, MC dockets, carrier and company name words,
 * person names, transcript words, leaf hashes.
 *
 * - **cold**: a fresh API process per route (started for that route alone,
 *   `RESPONSE_CACHE_ENTRIES=0` so nothing is answered from the hot-response
 *   cache), then `--cold` (default 20) sequential requests, each with new
 *   random parameters. By default only the process is cold: every file of
 *   the current snapshots is read once after the ingest, before the first
 *   cold process (`--page-cache=read`), so the OS page cache holds them
 *   where memory allows (the result records the bytes read and the page
 *   cache's size after). `--page-cache=drop` (root only) drops the page cache before each
 *   route's process instead, so its reads come from the disk; the files are
 *   then read once before the warm phase. `--page-cache=as-is` leaves the
 *   cache as the ingest left it (the setting of every run before
 *   2026-11-27 19:00, whose docs said the ingest had read the files). A
 *   host that pages out idle file pages undoes the read within about a
 *   minute (the DAMON pageout of this VM kind: docs/benchmarks.md). The
 *   process is measured once it listens, after its start-up warm-up (every
 *   route once in process, docs/operations.md; start-up time is recorded per
 *   route), as a deployment would put it in service; `--warmup-ms=0` measures
 *   without the warm-up. The first request (JIT, DuckDB buffers, lazily built
 *   indexes, whatever the warm-up did not reach) is reported apart, and is
 *   part of p99.
 * - **warm**: one API process, cache off, every route warmed with 30
 *   requests, then `wrk -t2 -c8` for `--seconds` (default 5) rotating over
 *   400 random parameter sets.
 *
 * Targets (issue 22): cold p99 < 50 ms; warm p99 < 10 ms and ≥ 1,000 req/s.
 * Results: bench/results/endpoints.json (the scale is recorded in it; `--out`
 * names another file), and the table printed as markdown for docs/benchmarks.md.
 *
 * Flags: `--scale=medium`, `--seconds=5`, `--cold=20`, `--only=<regex over
 * route names>`, `--out=<result name>`, `--warmup-ms=<ms>` (the API's start-up
 * warm-up budget, WARMUP_MS; 0 measures processes without it), `--wrk-cpus=<list>` (runs wrk under `taskset -c
 * <list>`, e.g. `1`: the load generator kept to one core, so that on a 2-core machine it does not take the server's
 * core from it; the server is not pinned), `--warm-both` (with `--wrk-cpus`: `warm` stays the unpinned run, and
 * each route's warm run is followed by one with wrk pinned, reported as `warm_pinned`: both placements side by side).
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../lib/api-keys.ts';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { SnapshotReader } from '../lib/warehouse/reader.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { pipelines } from '../jobs/pipelines.ts';
import { ensureSample } from '../jobs/sample.ts';
import { currentLinkPath } from '../lib/warehouse/layout.ts';
import { percentile, readServeNodeFlags, readTreesOnce, startServiceProcess, writeResult } from './bench-kit.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const flag = (name: string, def: string): string => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : def;
};
const scale = flag('scale', 'medium') as 'small' | 'medium' | 'full';
const SECONDS = Number(flag('seconds', '5'));
const COLD_N = Number(flag('cold', '20'));
const only = new RegExp(flag('only', '.'));
const outName = flag('out', 'endpoints');
const WARMUP_MS = process.argv.some((x) => x.startsWith('--warmup-ms=')) ? flag('warmup-ms', '15000') : null;
const WRK_CPUS = flag('wrk-cpus', '');
const WARM_BOTH = process.argv.includes('--warm-both') && WRK_CPUS !== '';
const PAGE_CACHE = flag('page-cache', 'read');
if (!['read', 'drop', 'as-is'].includes(PAGE_CACHE)) {
  console.error(`--page-cache=${PAGE_CACHE}: expected read, drop or as-is`);
  process.exit(1);
}
const DROP_CACHES = '/proc/sys/vm/drop_caches';
/** Writes back dirty pages, then drops the clean ones (Linux, root): the next read of any file comes from the disk. */
function dropPageCache(): void {
  spawnSync('sync');
  writeFileSync(DROP_CACHES, '3');
}
if (PAGE_CACHE === 'drop') {
  try {
    accessSync(DROP_CACHES, constants.W_OK);
  } catch (err) {
    console.error(`--page-cache=drop needs to write ${DROP_CACHES} (root on Linux): ${(err as Error).message}`);
    process.exit(1);
  }
}
if (WRK_CPUS && spawnSync('taskset', ['-c', WRK_CPUS, 'true']).status !== 0) {
  console.error(`taskset -c ${WRK_CPUS} failed: util-linux taskset is needed for --wrk-cpus`);
  process.exit(1);
}

if (spawnSync('wrk', ['--version']).error) {
  console.error('wrk not found: apt-get install -y wrk');
  process.exit(1);
}

// 1. The warehouse: sample at this scale, every domain ingested in process (skipped when unchanged).
const dataDir = path.join(ROOT, 'data', 'bench', `endpoints-${scale}`);
const inputDir = path.join(dataDir, 'sample', scale);
const config = loadConfig({ DATA_DIR: dataDir, INPUT_DIR: inputDir, LOG_LEVEL: 'silent' }, ROOT);
const t0 = Date.now();
await ensureSample(inputDir, { scale, seed: 42 });
for (const p of pipelines) {
  const rep = await runPipelineInProcess(p, { config, log: silentLogger, inputDir });
  console.log(
    `[${p.domain.domain}] ${rep.skipped ? 'unchanged' : `published ${rep.snapshot_id}: ${rep.rows} rows`} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
}

// 2. Parameter pools, drawn from the snapshots.
async function pool(domain: string, sql: string): Promise<string[]> {
  const r = await SnapshotReader.open(dataDir, domain, { poolSize: 1 });
  try {
    return (await r.query(sql)).map((x) => String(Object.values(x)[0]));
  } catch (err) {
    console.warn(`pool of ${domain} failed: ${(err as Error).message}`);
    return [];
  } finally {
    await r.close();
  }
}
const words = (xs: string[]) => [...new Set(xs.map((w) => w.toLowerCase().replace(/[^a-z0-9]/g, '')).filter((w) => w.length >= 4))];
const P: Record<string, string[]> = {
  ticker: await pool(
    'registry',
    `SELECT ticker FROM company_lookup WHERE is_primary AND status = 'active' ORDER BY hash(ticker) LIMIT 400`,
  ),
  company_word: words(
    await pool('registry', `SELECT DISTINCT split_part(name, ' ', 1) AS w FROM company_lookup ORDER BY hash(w) LIMIT 400`),
  ),
  person: await pool('registry', `SELECT DISTINCT person_name FROM people ORDER BY hash(person_name) LIMIT 400`),
  leaf_hash: await pool('registry', `SELECT leaf_hash FROM origin_leaves ORDER BY hash(leaf_hash) LIMIT 400`),
  dot: await pool('fmcsa', `SELECT dot_number FROM carriers ORDER BY hash(dot_number) LIMIT 400`),
  carrier_word: words(
    await pool(
      'fmcsa',
      `SELECT DISTINCT w FROM (SELECT unnest(string_split(legal_name, ' ')) AS w FROM carriers) WHERE NOT regexp_matches(w, '^[0-9]+$') ORDER BY hash(w) LIMIT 600`,
    ),
  ),
  // Names beyond one whole word (the variants of /api/carriers below): two consecutive words of a legal name, a
  // stretch from inside one word into the next, or the whole legal name; and 3-5 letter parts of the words.
  carrier_phrase: await pool(
    'fmcsa',
    `WITH named AS (
       SELECT string_split(lower(legal_name), ' ') AS w, lower(legal_name) AS n, hash(dot_number) AS h FROM carriers
       WHERE legal_name IS NOT NULL AND regexp_matches(lower(legal_name), '^[a-z]+ [a-z]+'))
     SELECT p FROM (SELECT DISTINCT w[1] || ' ' || w[2] AS p FROM named ORDER BY hash(p) LIMIT 130)
     UNION ALL SELECT p FROM (SELECT DISTINCT w[1][2:] || ' ' || w[2][:3] AS p FROM named WHERE length(w[1]) >= 3 ORDER BY hash(p) LIMIT 130)
     UNION ALL SELECT p FROM (SELECT n AS p FROM named ORDER BY h LIMIT 130)`,
  ),
  carrier_word_part: await pool(
    'fmcsa',
    `SELECT DISTINCT p FROM (SELECT unnest(string_split(lower(legal_name), ' ')) AS w FROM carriers WHERE legal_name IS NOT NULL)
     , LATERAL (SELECT w[1:3] AS p UNION ALL SELECT w[2:5])
     WHERE regexp_matches(w, '^[a-z]{5,}$') ORDER BY hash(p) LIMIT 400`,
  ),
  state: await pool('fmcsa', `SELECT DISTINCT phy_state FROM carriers WHERE phy_state IS NOT NULL ORDER BY 1`),
  mc: await pool('fmcsa', `SELECT docket1 FROM carriers WHERE docket1 IS NOT NULL ORDER BY hash(docket1) LIMIT 400`),
  vin: await pool(
    'fmcsa',
    `SELECT DISTINCT vin FROM crashes WHERE regexp_matches(vin, '^[A-HJ-NPR-Z0-9]{11,17}$') ORDER BY hash(vin) LIMIT 400`,
  ),
  flag_code: await pool('fmcsa', `SELECT DISTINCT unnest(red_flag_codes) AS c FROM carrier_risk ORDER BY 1`),
  quote_ticker: await pool('quotes', `SELECT DISTINCT ticker FROM quote_bars ORDER BY hash(ticker) LIMIT 400`),
  transcript_ticker: await pool('transcripts', `SELECT DISTINCT ticker FROM transcripts ORDER BY 1`),
  transcript_topic: await pool('transcripts', `SELECT DISTINCT topic FROM transcript_topics ORDER BY 1`),
};
for (const [k, v] of Object.entries(P)) console.log(`pool ${k}: ${v.length}`);

let seed = 22;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = (k: string): string => {
  const xs = P[k] ?? [];
  if (xs.length === 0) throw new Error(`empty parameter pool ${k}`);
  return xs[Math.floor(rand() * xs.length)]!;
};

// 3. The routes: path parameters by name, query parameters by route.
/** Value of a path parameter (by its name), or null when the route cannot be driven from the warehouse. */
function pathParam(route: string, name: string): string | null {
  if (name === 'ticker')
    return route.includes('/quote') ? pick('quote_ticker') : route.includes('/transcripts') ? pick('transcript_ticker') : pick('ticker');
  if (name === 'dot') return pick('dot');
  if (name === 'name') return pick('person');
  if (name === 'leaf_hash') return pick('leaf_hash');
  if (name === 'domain') return 'fmcsa';
  if (name === 'table') return 'dataset_status';
  return null;
}
/** Query parameters per route (the search-like ones with their filter, list routes with one of their keys). */
type Query = Record<string, string>;
const QUERY: Record<string, () => Query> = {
  '/api/carriers': () => ({ name: pick('carrier_word') }),
  '/api/safety': () => ({ dot: pick('dot') }),
  '/api/inspections': () => ({ dot: pick('dot') }),
  '/api/crashes': () => (rand() < 0.5 ? { dot: pick('dot') } : { vin: pick('vin') }) as Query,
  '/api/enforcement': () => ({ dot: pick('dot') }),
  '/api/red-flags': (): Query => {
    const r = rand();
    return r < 0.25
      ? {}
      : r < 0.5
        ? { state: pick('state') }
        : r < 0.75
          ? { code: pick('flag_code') }
          : { code: pick('flag_code'), state: pick('state') };
  },
  '/api/search': () => ({ q: pick('company_word') }),
  '/api/search/transcripts': () => ({ topic: pick('transcript_topic') }),
  '/api/signals': () => (rand() < 0.5 ? {} : { ticker: pick('ticker') }) as Query,
  '/api/attestation': () => ({ dot: pick('dot') }),
  '/api/vetting': () => ({ dot: pick('dot') }),
  // Monitoring lists belong to an account: the bench key has none in the state store, so a broker id names one.
  '/api/watchlist': () => ({ broker_id: 'bench' }),
  '/api/monitoring/events': () => ({ broker_id: 'bench' }),
  '/api/monitoring/settings': () => ({ broker_id: 'bench' }),
  '/api/webhooks': () => ({ broker_id: 'bench' }),
  '/api/webhooks/deliveries': () => ({ broker_id: 'bench' }),
};
/** Routes not driven, with the reason (they are listed in the result). */
const SKIP: Record<string, string> = {
  '/api/care/{id}': 'needs a custody chain id (state written by POST /api/care): measured by `npm run bench -- vet`',
  '/api/care/{id}/verify': 'needs a custody chain id (state written by POST /api/care): measured by `npm run bench -- vet`',
  '/mcp': 'GET is not used by the stateless MCP endpoint (405); the MCP tools are measured as POST tools/call',
  '/api/export/{domain}/{table}': 'bulk download of a whole table (a file stream, not a lookup)',
};
/** Route prefixes not driven: operator routes behind ADMIN_TOKEN (404 without it). */
const SKIP_PREFIX: Record<string, string> = { '/admin/': 'operator route behind ADMIN_TOKEN (404 when unset), not a read API' };

interface Target {
  name: string;
  kind: 'http' | 'mcp';
  /** A new request: GET path or MCP tools/call body. */
  next(): { path: string; body?: string };
}

interface OpenApi {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string; required?: boolean }> }>>;
}

function httpTarget(route: string, op: OpenApi['paths'][string][string]): Target | string {
  if (SKIP[route]) return SKIP[route]!;
  for (const [prefix, reason] of Object.entries(SKIP_PREFIX)) if (route.startsWith(prefix)) return reason;
  const params = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
  for (const m of route.matchAll(/\{([^}]+)\}/g)) if (!params.includes(m[1]!)) params.push(m[1]!);
  for (const p of params) if (pathParam(route, p) === null) return `no value for path parameter ${p}`;
  return {
    name: `GET ${route}`,
    kind: 'http',
    next: () => {
      const p = route.replace(/\{([^}]+)\}/g, (_m, n: string) => encodeURIComponent(pathParam(route, n)!));
      const q = new URLSearchParams(QUERY[route]?.() ?? {}).toString();
      return { path: q ? `${p}?${q}` : p };
    },
  };
}

/** MCP arguments by property name (per tool where the name means different things). */
function toolArg(tool: string, prop: string): unknown {
  switch (prop) {
    case 'dot_number':
    case 'dot':
      return Number(pick('dot'));
    case 'dot_numbers':
      return [Number(pick('dot')), Number(pick('dot'))];
    case 'ticker':
      return /quote/.test(tool) ? pick('quote_ticker') : /transcript/.test(tool) ? pick('transcript_ticker') : pick('ticker');
    case 'name':
      return tool.startsWith('freight') ? pick('carrier_word') : pick('person');
    case 'query':
    case 'q':
      return pick('company_word');
    case 'topic':
      return pick('transcript_topic');
    case 'vin':
      return pick('vin');
    case 'leaf_hash':
      return pick('leaf_hash');
    case 'mc_number':
      return pick('mc');
    case 'state':
      return pick('state');
    case 'code':
      return pick('flag_code');
    case 'broker_id':
      return 'bench'; // the account the REST monitoring routes read too (QUERY above)
    default:
      return undefined;
  }
}

interface ToolInfo {
  name: string;
  annotations?: { readOnlyHint?: boolean };
  inputSchema: { properties?: Record<string, { type?: string }>; required?: string[]; anyOf?: unknown };
}

/** Arguments per tool beyond the required ones (the search-like tools get their filter). */
const TOOL_EXTRA: Record<string, string[]> = {
  freight_carrier_lookup: ['name'],
  freight_red_flag_search: ['state'],
  sec_transcript_search: ['topic'],
  // Monitoring lists belong to an account: the bench key has none, so the broker id names one (as for REST).
  freight_watchlist: ['broker_id'],
  freight_monitoring_events: ['broker_id'],
};

function mcpTarget(t: ToolInfo): Target | string {
  const props = t.inputSchema.properties ?? {};
  const wanted = [...new Set([...(t.inputSchema.required ?? []), ...(TOOL_EXTRA[t.name] ?? [])])];
  // A tool with no required argument but a key argument (ticker, dot_number) gets it: its answer is about one entity.
  for (const k of ['ticker', 'dot_number', 'query', 'q', 'vin', 'leaf_hash', 'name']) if (wanted.length === 0 && k in props) wanted.push(k);
  for (const w of wanted) if (toolArg(t.name, w) === undefined) return `no value for argument ${w}`;
  let id = 0;
  return {
    name: `MCP ${t.name}`,
    kind: 'mcp',
    next: () => {
      const args = Object.fromEntries(wanted.map((w) => [w, toolArg(t.name, w)]));
      return {
        path: '/mcp',
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: t.name, arguments: args } }),
      };
    },
  };
}

// 4. A key with a limit no benchmark reaches; every request carries it (metering runs as in production).
const { secret } = await createApiKey(dataDir, { label: 'bench-endpoints', hourlyLimit: 1_000_000_000 });
const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
const mcpHeaders = { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
// The carrier-lookup abuse guard (LOOKUP_GUARD_PER_HOUR, 20,000 an hour) would answer 429 within a warm run.
const serverEnv: Record<string, string> = {
  DATA_DIR: dataDir,
  RESPONSE_CACHE_ENTRIES: '0',
  SNAPSHOT_POLL_MS: '60000',
  LOOKUP_GUARD_PER_HOUR: '1000000000',
  // One public base URL for every process, as a deployment has: links would otherwise carry each process's port, so
  // every start published new versions of the discovery files and /.well-known/archive grew run after run (2.3 MB).
  PUBLIC_BASE_URL: 'http://127.0.0.1:8787',
  // The start-up warm-up (docs/operations.md) runs as in production unless `--warmup-ms=0` measures without it.
  ...(WARMUP_MS === null ? {} : { WARMUP_MS }),
};

async function call(
  base: string,
  t: Target,
  req: { path: string; body?: string },
): Promise<{ ms: number; status: number; bytes: number; error: boolean }> {
  const s = performance.now();
  const r = await fetch(base + req.path, req.body ? { method: 'POST', headers: mcpHeaders, body: req.body } : { headers });
  const buf = Buffer.from(await r.arrayBuffer());
  const ms = performance.now() - s;
  // An MCP tool error is a 200 with isError: true.
  const error = r.status >= 500 || (t.kind === 'mcp' && /"isError":true/.test(buf.toString('utf8', 0, Math.min(buf.length, 4096))));
  return { ms, status: r.status, bytes: buf.length, error };
}

async function stop(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null) return;
  const done = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await done;
}

// 5. Discover the routes and tools from a running server.
const first = await startServiceProcess(serverEnv);
const openapi = (await (await fetch(`${first.url}/openapi.json`)).json()) as OpenApi;
const toolsRes = await fetch(`${first.url}/mcp`, {
  method: 'POST',
  headers: mcpHeaders,
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
});
const tools = ((await toolsRes.json()) as { result: { tools: ToolInfo[] } }).result.tools;
await stop(first.proc);

const targets: Target[] = [];
const skipped: Array<{ name: string; reason: string }> = [];
for (const [route, ops] of Object.entries(openapi.paths).sort(([a], [b]) => a.localeCompare(b))) {
  if (!ops.get) continue;
  const t = httpTarget(route, ops.get);
  if (typeof t === 'string') skipped.push({ name: `GET ${route}`, reason: t });
  else targets.push(t);
}
for (const tool of tools.sort((a, b) => a.name.localeCompare(b.name))) {
  if (tool.annotations?.readOnlyHint !== true) {
    skipped.push({ name: `MCP ${tool.name}`, reason: 'not a read tool (readOnlyHint false)' });
    continue;
  }
  const t = mcpTarget(tool);
  if (typeof t === 'string') skipped.push({ name: `MCP ${tool.name}`, reason: t });
  else targets.push(t);
}
// Variants of the carrier name search the route's pool (whole words) does not draw: measured as rows of their own,
// so the route's row stays comparable with earlier runs.
for (const [label, key] of [
  ['phrase', 'carrier_phrase'],
  ['word part', 'carrier_word_part'],
] as const)
  if ((P[key] ?? []).length)
    targets.push({
      name: `GET /api/carriers (name: ${label})`,
      kind: 'http',
      next: () => ({ path: `/api/carriers?${new URLSearchParams({ name: pick(key) })}` }),
    });
const selected = targets.filter((t) => only.test(t.name));
console.log(`${selected.length} targets (${skipped.length} skipped)`);

// 6. Cold: a fresh process per target.
interface Cold {
  first_ms: number;
  p50_ms: number;
  p99_ms: number;
  statuses: Record<string, number>;
  errors: number;
  bytes_p50: number;
  /** Spawn to listening: start-up, including the warm-up. */
  startup_ms: number;
}
const cold = new Map<string, Cold>();
/** Every file of every domain's current snapshot, read once (the page cache's state the measurements start from). */
const readSnapshotsOnce = async (phase: string) => {
  const r = await readTreesOnce(pipelines.map((p) => currentLinkPath(dataDir, p.domain.domain)));
  const gb = (b: number | null) => (b === null ? '?' : (b / 2 ** 30).toFixed(1));
  console.log(`${phase}: read ${r.files} snapshot files, ${gb(r.bytes)} GB in ${r.ms} ms; page cache ${gb(r.page_cache_bytes)} GB after`);
  return r;
};
const pageCache: Record<string, unknown> = { mode: PAGE_CACHE };
if (PAGE_CACHE === 'read') pageCache.read_before_cold = await readSnapshotsOnce('before the cold runs');
for (const t of selected) {
  if (PAGE_CACHE === 'drop') dropPageCache();
  const started = performance.now();
  const srv = await startServiceProcess(serverEnv);
  const startupMs = Math.round(performance.now() - started);
  try {
    const rs = [];
    for (let i = 0; i < COLD_N; i++) rs.push(await call(srv.url, t, t.next()));
    const lat = rs.map((r) => r.ms).sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const r of rs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const c: Cold = {
      first_ms: Math.round(rs[0]!.ms * 100) / 100,
      p50_ms: percentile(lat, 50),
      p99_ms: percentile(lat, 99),
      statuses,
      errors: rs.filter((r) => r.error).length,
      bytes_p50: rs.map((r) => r.bytes).sort((a, b) => a - b)[Math.floor(rs.length / 2)]!,
      startup_ms: startupMs,
    };
    cold.set(t.name, c);
    console.log(
      `cold ${t.name.padEnd(44)} first ${c.first_ms} ms  p50 ${c.p50_ms}  p99 ${c.p99_ms}  ${JSON.stringify(statuses)}  ${c.bytes_p50} B  (start-up ${startupMs} ms)`,
    );
  } finally {
    await stop(srv.proc);
  }
}

// 7. Warm: one process, wrk at 8 connections per target.
interface Warm {
  req_per_s: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  socket_errors: number;
}
function runWrk(base: string, t: Target, cpus: string, n = 400): Warm {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'proofline-wrk-'));
  const script = path.join(dir, 'bench.lua');
  const reqs = Array.from({ length: n }, () => t.next());
  const hs = t.kind === 'mcp' ? mcpHeaders : headers;
  writeFileSync(
    script,
    `
local reqs = {${reqs.map((r) => `{${JSON.stringify(r.path)}, ${r.body ? JSON.stringify(r.body) : 'nil'}}`).join(',\n')}}
${Object.entries(hs)
  .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
  .join('\n')}
local i = math.random(#reqs)
request = function()
  i = i % #reqs + 1
  local r = reqs[i]
  if r[2] then return wrk.format("POST", r[1], nil, r[2]) end
  return wrk.format("GET", r[1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"errors_status":%d,"errors_socket":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`,
  );
  const wrkArgs = ['-t2', '-c8', `-d${SECONDS}s`, '--timeout', '5s', '-s', script, base];
  const r = cpus
    ? spawnSync('taskset', ['-c', cpus, 'wrk', ...wrkArgs], { encoding: 'utf8' })
    : spawnSync('wrk', wrkArgs, { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true }); // each run left its script folder behind (1,405 in /tmp after a day of runs)
  const line = r.stdout.split('\n').find((l) => l.startsWith('WRKJSON '));
  if (!line) throw new Error(`wrk failed: ${r.stderr || r.stdout}`);
  const j = JSON.parse(line.slice(8)) as {
    requests: number;
    duration_us: number;
    errors_status: number;
    errors_socket: number;
    p50_us: number;
    p99_us: number;
  };
  return {
    req_per_s: Math.round(j.requests / (j.duration_us / 1e6)),
    p50_ms: Math.round(j.p50_us / 10) / 100,
    p99_ms: Math.round(j.p99_us / 10) / 100,
    non_2xx: j.errors_status,
    socket_errors: j.errors_socket,
  };
}
const warm = new Map<string, Warm>();
const warmPinned = new Map<string, Warm>();
// After cold runs that dropped the page cache, the warm phase starts from the files read once, as the default does.
if (PAGE_CACHE === 'drop') pageCache.read_before_warm = await readSnapshotsOnce('before the warm runs');
const srv = await startServiceProcess(serverEnv);
try {
  for (const t of selected) {
    // The warm-up's first call can meet a keep-alive connection the server closed while wrk ran (idle past its 5 s
    // keepAliveTimeout, longer with --warm-both): fetch then fails with "other side closed"; a new connection is right.
    for (let i = 0; i < 30; i++) await call(srv.url, t, t.next()).catch(() => call(srv.url, t, t.next()));
    // With --warm-both, `warm` is wrk unpinned (as without --wrk-cpus) and `warm_pinned` the pinned run after it.
    const w = runWrk(srv.url, t, WARM_BOTH ? '' : WRK_CPUS);
    warm.set(t.name, w);
    console.log(
      `warm ${t.name.padEnd(44)} ${String(w.req_per_s).padStart(6)} req/s  p50 ${w.p50_ms}  p99 ${w.p99_ms}  non-2xx ${w.non_2xx}`,
    );
    if (WARM_BOTH) {
      const u = runWrk(srv.url, t, WRK_CPUS);
      warmPinned.set(t.name, u);
      console.log(`  wrk pinned ${''.padEnd(38)} ${String(u.req_per_s).padStart(6)} req/s  p50 ${u.p50_ms}  p99 ${u.p99_ms}`);
    }
  }
} finally {
  await stop(srv.proc);
}

// 8. Results and the docs table.
const rows = selected.map((t) => {
  const c = cold.get(t.name)!;
  const w = warm.get(t.name)!;
  const targetsMet = { cold_p99_lt_50ms: c.p99_ms < 50, warm_p99_lt_10ms: w.p99_ms < 10, warm_ge_1000_req_s: w.req_per_s >= 1000 };
  const u = warmPinned.get(t.name);
  return { name: t.name, kind: t.kind, cold: c, warm: w, ...(u ? { warm_pinned: u } : {}), targets_met: targetsMet };
});
const md = [
  `| route | cold first / p50 / p99 ms | warm p50 / p99 ms | warm req/s |${WARM_BOTH ? ` wrk on CPU ${WRK_CPUS}: p50 / p99 ms, req/s |` : ''} answer bytes (p50) | targets |`,
  `|---|---|---|---|${WARM_BOTH ? '---|' : ''}---|---|`,
  ...rows.map((r) => {
    const miss = Object.entries(r.targets_met)
      .filter(([, ok]) => !ok)
      .map(([k]) => k.replace(/_/g, ' '));
    const status = Object.keys(r.cold.statuses).join('/');
    const warmNon2xx = r.warm.non_2xx ? ` (${r.warm.non_2xx} non-2xx)` : '';
    return `| \`${r.name}\` | ${r.cold.first_ms.toFixed(1)} / ${r.cold.p50_ms.toFixed(1)} / ${r.cold.p99_ms.toFixed(1)} | ${r.warm.p50_ms.toFixed(2)} / ${r.warm.p99_ms.toFixed(2)} | ${r.warm.req_per_s}${warmNon2xx} |${r.warm_pinned ? ` ${r.warm_pinned.p50_ms.toFixed(2)} / ${r.warm_pinned.p99_ms.toFixed(2)}, ${r.warm_pinned.req_per_s} |` : ''} ${r.cold.bytes_p50}${status === '200' ? '' : ` (${status})`} | ${miss.length ? `missed: ${miss.join(', ')}` : 'met'} |`;
  }),
].join('\n');
console.log(`\n${md}\n`);
writeResult(outName, {
  scale,
  load_average_1m_at_end: Math.round(os.loadavg()[0]! * 10) / 10,
  cold_definition: `a fresh API process per route, hot-response cache off (RESPONSE_CACHE_ENTRIES=0), measured once it listens, i.e. after its start-up warm-up (docs/operations.md; startup_ms per route) unless warmup_ms is 0; ${
    PAGE_CACHE === 'read'
      ? 'every file of the current snapshots read once before the first cold process, so only the process is cold (page_cache)'
      : PAGE_CACHE === 'drop'
        ? 'the OS page cache dropped before each route (sync; drop_caches 3): its files are read from the disk'
        : 'the OS page cache as the ingest left it'
  }; cold_n sequential requests with new random parameters, the first one included`,
  page_cache: pageCache,
  warmup_ms: WARMUP_MS === null ? 'default (WARMUP_MS)' : Number(WARMUP_MS),
  startup_ms_p50: percentile(
    [...cold.values()].map((c) => c.startup_ms).sort((a, b) => a - b),
    50,
  ),
  cold_n: COLD_N,
  warm_definition: `one API process, cache off, 30 warm-up requests per route, then wrk -t2 -c8 over 400 random parameter sets${
    WARM_BOTH
      ? `, wrk not pinned, then again with wrk kept to CPU ${WRK_CPUS} (taskset; the server not pinned): warm_pinned`
      : WRK_CPUS
        ? `, wrk kept to CPU ${WRK_CPUS} (taskset; the server not pinned)`
        : ', wrk not pinned'
  }`,
  wrk_cpus: WRK_CPUS || null,
  server_node_flags: readServeNodeFlags(),
  seconds_per_warm_run: SECONDS,
  pools: Object.fromEntries(Object.entries(P).map(([k, v]) => [k, v.length])),
  routes: rows,
  skipped,
  table_markdown: md,
});
