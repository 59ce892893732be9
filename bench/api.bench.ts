/**
 * Read-API benchmark against a real server on loopback, with wrk (`apt-get
 * install wrk`), bounded duration:
 *
 * - `/api/company/{ticker}` at 32 connections, rotating over many tickers
 *   (warm hot cache), next to a bare node:http server returning the same bytes
 *   (status, headers and body of a hot answer)
 *   in the same run (targets, issue 22 item 5: ≥ 0.85 of bare, p99 < 5 ms at
 *   32 connections; earlier ones kept: ≥ 10,000 req/s, p99 < 10 ms);
 * - `/api/search?q=` with a cache-busting unknown parameter, so every request
 *   runs the DuckDB search (target p99 < 50 ms), at 8 connections;
 * - `/api/company/{ticker}/quote` when the quotes domain is published.
 *
 * Scale (BENCH_SCALE, default `full`): `full` ingests the full-scale EDGAR
 * sample (8,200 companies, shared with the registry bench under
 * data/bench/registry/input/full) and the quotes sample of BENCH_API_QUOTES
 * scale (default `full`: 8,200 tickers x 2,520 days, raw and adjusted);
 * `medium`/`small` generate both at that scale. BENCH_SECONDS sets the
 * duration per run (default 10), BENCH_ROUNDS the alternating bare/company
 * rounds (default 5); `--out=<name>` names the result file (default `api`). Requests carry a Pro key with a huge
 * limit so metering runs on every request (and no 429 skews the numbers).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { createApiKey } from '../lib/api-keys.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { pipelines } from '../jobs/pipelines.ts';
import { ensureSample, sampleGenerators } from '../jobs/sample.ts';
import { edgarSampleGenerator } from '../ingest/edgar/edgar.sample.ts';
import { quotesSampleGenerator } from '../ingest/quotes/quotes.sample.ts';
import { mkdir, readlink, rm, symlink } from 'node:fs/promises';
import { SnapshotReader } from '../lib/warehouse/reader.ts';
import { readServeNodeFlags, writeResult } from './bench-kit.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** Alternating bare / company rounds (BENCH_ROUNDS, default 5: single rounds swing by ±0.15 in ratio on this host). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const scale = (process.env.BENCH_SCALE ?? 'full') as 'small' | 'medium' | 'full';
const quotesScale = (process.env.BENCH_API_QUOTES ?? scale) as 'small' | 'medium' | 'full';
/** `--out=<name>`: the result file's name under bench/results/ (default `api`; a run below full scale should not overwrite api.json). */
const outName = process.argv.find((a) => a.startsWith('--out='))?.slice('--out='.length) || 'api';

if (spawnSync('wrk', ['--version']).error) {
  console.error('wrk not found: apt-get install -y wrk');
  process.exit(1);
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

interface WrkResult {
  requests: number;
  duration_us: number;
  errors_status: number;
  errors_socket: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  mean_us: number;
  req_per_s: number;
  /** CPU time (user + system, all threads) the measured server process spent per request during the run. */
  server_cpu_us_per_req?: number;
}

/** User + system CPU time of a process so far, in microseconds (/proc/<pid>/stat, clock ticks of 10 ms). */
function cpuUs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return null;
  }
}

function runWrk(url: string, paths: string[], connections: number, headers: Record<string, string>, serverPid?: number): WrkResult {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'proofline-wrk-'));
  const script = path.join(dir, 'bench.lua');
  writeFileSync(
    script,
    `
local paths = {${paths.map((p) => JSON.stringify(p)).join(',')}}
${Object.entries(headers)
  .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
  .join('\n')}
local i = math.random(#paths)
local n = 0
request = function()
  i = i % #paths + 1
  n = n + 1
  local p = paths[i]
  p = string.gsub(p, "{n}", tostring(n) .. "-" .. tostring(math.random(1000000)))
  return wrk.format("GET", p)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"errors_status":%d,"errors_socket":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`,
  );
  const cpu0 = cpuUs(serverPid);
  const r = spawnSync('wrk', ['-t2', `-c${connections}`, `-d${SECONDS}s`, '--timeout', '5s', '-s', script, url], { encoding: 'utf8' });
  const line = r.stdout.split('\n').find((l) => l.startsWith('WRKJSON '));
  if (!line) throw new Error(`wrk failed: ${r.stderr || r.stdout}`);
  const j = JSON.parse(line.slice(8)) as Omit<WrkResult, 'req_per_s'>;
  const cpu1 = cpuUs(serverPid);
  const res: WrkResult = { ...j, req_per_s: Math.round(j.requests / (j.duration_us / 1e6)) };
  if (cpu0 !== null && cpu1 !== null && j.requests > 0) res.server_cpu_us_per_req = Math.round(((cpu1 - cpu0) / j.requests) * 10) / 10;
  return res;
}

/**
 * One GET over a raw socket with exactly the request wrk sends (Host plus `headers`), as fetch would add
 * Accept-Encoding: the response's headers in wire order (without Date, Connection and Keep-Alive, which node adds
 * to every answer) and its body.
 */
async function rawExchange(
  port: number,
  target: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, string>; body: Buffer }> {
  const { connect } = await import('node:net');
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(port, '127.0.0.1', () =>
      s.write(
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('')}Connection: close\r\n\r\n`,
      ),
    );
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('end', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
  });
  const split = raw.indexOf('\r\n\r\n');
  const out: Record<string, string> = {};
  for (const line of raw.subarray(0, split).toString('latin1').split('\r\n').slice(1)) {
    const c = line.indexOf(':');
    const k = line.slice(0, c);
    if (!['date', 'connection', 'keep-alive'].includes(k.toLowerCase())) out[k] = line.slice(c + 1).trim();
  }
  return { headers: out, body: raw.subarray(split + 4) };
}

function vmHwmMb(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

async function waitFor(url: string, ms = 60_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() - t0 > ms) throw new Error(`server at ${url} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** GET that retries once: a pooled keep-alive connection idle during a wrk run may have been closed by the server. */
async function get(url: string, headers: Record<string, string>): Promise<Response> {
  try {
    return await fetch(url, { headers });
  } catch {
    return fetch(url, { headers });
  }
}

function fmt(name: string, r: WrkResult): string {
  const cpu = r.server_cpu_us_per_req === undefined ? '' : `  cpu ${r.server_cpu_us_per_req} us/req`;
  return `${name.padEnd(34)} ${String(r.req_per_s).padStart(7)} req/s  p50 ${(r.p50_us / 1000).toFixed(2)} ms  p99 ${(r.p99_us / 1000).toFixed(2)} ms${cpu}  non-2xx ${r.errors_status}  socket errors ${r.errors_socket}`;
}

// 1. Data: the sample at this scale, ingested in process (skipped when unchanged).
const dataDir = path.join(ROOT, 'data', 'bench', `api-${scale}`);
const inputDir = path.join(dataDir, 'input');
const config = loadConfig({ DATA_DIR: dataDir, INPUT_DIR: inputDir, LOG_LEVEL: 'silent' }, ROOT);
const t0 = Date.now();
if (scale === 'full') {
  // Full scale: the EDGAR sample shared with the registry bench, and the quotes sample, linked under one input folder.
  const edgarDir = path.join(ROOT, 'data', 'bench', 'registry', 'input', 'full');
  const quotesDir = path.join(dataDir, `quotes-${quotesScale}`);
  await ensureSample(edgarDir, { scale: 'full', seed: 42, generators: [edgarSampleGenerator] });
  await ensureSample(quotesDir, { scale: quotesScale, seed: 42, generators: [quotesSampleGenerator] });
  await mkdir(inputDir, { recursive: true });
  for (const [name, target] of [
    ['sec', path.join(edgarDir, 'sec')],
    ['quotes', path.join(quotesDir, 'quotes')],
  ] as const) {
    const link = path.join(inputDir, name);
    if ((await readlink(link).catch(() => null)) !== target) {
      await rm(link, { recursive: true, force: true });
      await symlink(target, link);
    }
  }
  console.log(`inputs ready (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
} else {
  await ensureSample(inputDir, { scale, seed: 42, generators: sampleGenerators.filter((g) => /edgar|quote/i.test(g.name)) });
}
const benchDomains = pipelines.filter((p) => ['registry', 'quotes'].includes(p.domain.domain));
for (const p of benchDomains) {
  const rep = await runPipelineInProcess(p, { config, log: silentLogger, inputDir });
  console.log(
    `[${p.domain.domain}] ${rep.skipped ? 'unchanged' : `published ${rep.snapshot_id}: ${rep.rows} rows`} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
}

// 2. Tickers and search words from the snapshot.
const reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
const tickers = (
  await reader.query(/* sql */ `SELECT ticker FROM company_lookup WHERE is_primary AND status = 'active' ORDER BY hash(ticker) LIMIT 500`)
).map((r) => String(r.ticker));
const words = (
  await reader.query(
    /* sql */ `SELECT DISTINCT lower(split_part(name, ' ', 1)) AS w FROM company_lookup WHERE length(split_part(name, ' ', 1)) >= 4 ORDER BY hash(w) LIMIT 200`,
  )
)
  .map((r) => String(r.w).replace(/[^a-z0-9]/g, ''))
  .filter((w) => w.length >= 3);
const companies = Number((await reader.query(/* sql */ `SELECT count(DISTINCT cik) AS n FROM company_lookup`))[0]!.n);
const hasQuotes = existsSync(path.join(dataDir, 'warehouse', 'quotes', 'CURRENT'));
await reader.close();

// 3. A Pro key with a limit no benchmark reaches.
const { secret } = await createApiKey(dataDir, { label: 'bench', hourlyLimit: 1_000_000_000 });
const headers = { Authorization: `Bearer ${secret}`, 'User-Agent': 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)' };

// 4. The server, with the V8 flags of `npm run serve` (package.json is their one definition).
const serverFlags = readServeNodeFlags(ROOT);
const port = await freePort();
const server: ChildProcess = spawn(process.execPath, [...serverFlags, '--import', 'tsx', path.join(ROOT, 'service', 'main.ts')], {
  env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', REDIS_URL: '' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
// BENCH_API_COMPARE_ROOT: a second checkout (e.g. `git archive <base> | tar -x`, node_modules linked) whose server
// runs in the same rounds on its own copy of the data directory (warehouse hard-linked, state copied: each server
// is its query log's one writer), so a change is compared with its base within one run.
const compareRoot = process.env.BENCH_API_COMPARE_ROOT;
let compare: ChildProcess | null = null;
let compareBase = '';
if (compareRoot) {
  const compareDir = `${dataDir}-compare`;
  await rm(compareDir, { recursive: true, force: true });
  await mkdir(compareDir, { recursive: true });
  for (const d of ['state', 'keys']) if (existsSync(path.join(dataDir, d))) spawnSync('cp', ['-r', path.join(dataDir, d), compareDir]);
  spawnSync('cp', ['-al', path.join(dataDir, 'warehouse'), compareDir]);
  for (const f of ['query-log.duckdb', 'query-log.duckdb.wal', 'query-log.duckdb.spool'])
    await rm(path.join(compareDir, 'state', f), { recursive: true, force: true });
  const comparePort = await freePort();
  // The base build runs with its own checkout's serve flags: a change of the flags is compared with its base too.
  compare = spawn(process.execPath, [...readServeNodeFlags(compareRoot), '--import', 'tsx', path.join(compareRoot, 'service', 'main.ts')], {
    cwd: compareRoot,
    env: { ...process.env, DATA_DIR: compareDir, PORT: String(comparePort), HOST: '127.0.0.1', LOG_LEVEL: 'warn', REDIS_URL: '' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  compareBase = `http://127.0.0.1:${comparePort}`;
}
let bare: ChildProcess | null = null;
let bareSame: ChildProcess | null = null;
try {
  await waitFor(`${base}/api/health`);
  // Warm the hot cache for every ticker used.
  for (const t of tickers) await (await get(`${base}/api/company/${t}`, headers)).arrayBuffer();
  if (compare) {
    await waitFor(`${compareBase}/api/health`);
    for (const t of tickers) await (await get(`${compareBase}/api/company/${t}`, headers)).arrayBuffer();
  }
  const sampleRes = await get(`${base}/api/company/${tickers[0]}`, headers);
  const sampleBody = await sampleRes.text();

  // 5. A bare node:http server returning the same bytes: the same status line, headers and body as a hot answer
  //    (node adds Date, Connection and Keep-Alive to both).
  const sampleHeaders = Object.fromEntries(
    [...sampleRes.headers].filter(([k]) => !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)),
  );
  const barePort = await freePort();
  bare = spawn(
    process.execPath,
    [
      '-e',
      `
    const body = Buffer.from(${JSON.stringify(sampleBody)});
    const headers = ${JSON.stringify(sampleHeaders)};
    headers['content-length'] = String(body.length);
    require('node:http').createServer((req, res) => { res.writeHead(200, headers); res.end(body); })
      .listen(${barePort}, '127.0.0.1');
  `,
    ],
    { stdio: 'inherit' },
  );
  await waitFor(`http://127.0.0.1:${barePort}/`);
  // 5b. The target's reference above receives `GET /` without the Authorization and User-Agent headers every
  //     company request carries, and (fetch asked for gzip) sends a `content-encoding: gzip` header our
  //     uncompressed answer has not. A second bare server, measured with the company requests themselves, answers
  //     exactly the bytes of our hot answer (its headers without content-encoding, our body): the cost of node's
  //     HTTP machinery alone for this exchange. Reported beside the target's ratio, never instead of it.
  const plain = await rawExchange(port, `/api/company/${tickers[0]}`, headers);
  const bareSamePort = await freePort();
  bareSame = spawn(
    process.execPath,
    [
      '-e',
      `
    const body = Buffer.from(${JSON.stringify(plain.body.toString('base64'))}, 'base64');
    const headers = ${JSON.stringify(plain.headers)};
    require('node:http').createServer((req, res) => { res.writeHead(200, headers); res.end(body); })
      .listen(${bareSamePort}, '127.0.0.1');
  `,
    ],
    { stdio: 'inherit' },
  );
  await waitFor(`http://127.0.0.1:${bareSamePort}/`);

  const companyPaths = tickers.map((t) => `/api/company/${t}`);
  const searchPaths = words.map((w) => `/api/search?q=${encodeURIComponent(w)}&nocache={n}`);
  const runs: Record<string, WrkResult> = {};
  // Bare and company alternate over ROUNDS rounds: this machine's speed drifts by tens of percent within
  // minutes (other tenants), so one run of each, back to back, compares two different machines. Each
  // side's reported run is its median-throughput round; the ratio is the median of the per-round ratios.
  const rounds: Array<{
    bare: WrkResult;
    company: WrkResult;
    ratio: number;
    bareSame: WrkResult;
    ratioSame: number;
    compare?: WrkResult;
    ratioCompare?: number;
  }> = [];
  const r2 = (x: number) => Math.round(x * 100) / 100;
  // Work a server defers past its own wrk run (the query log loads its spooled rows in large batches) is counted:
  // its CPU from the start of its first run to the end of its last, over every request of every round, and what of
  // that fell outside its own runs (while the other servers were measured).
  const serverCpuStart = cpuUs(server.pid);
  const compareCpuStart = compare ? cpuUs(compare.pid) : null;
  for (let r = 0; r < ROUNDS; r++) {
    const bareRun = runWrk(`http://127.0.0.1:${barePort}`, ['/'], 32, {}, bare.pid);
    console.log(fmt(`bare node:http (same bytes), c32 [${r + 1}]`, bareRun));
    const companyRun = runWrk(base, companyPaths, 32, headers, server.pid);
    console.log(fmt(`/api/company/{ticker}, c32 [${r + 1}]`, companyRun));
    const bareSameRun = runWrk(`http://127.0.0.1:${bareSamePort}`, companyPaths, 32, headers, bareSame.pid);
    console.log(fmt(`bare, identical exchange, c32 [${r + 1}]`, bareSameRun));
    const compareRun = compare ? runWrk(compareBase, companyPaths, 32, headers, compare.pid) : undefined;
    if (compareRun) console.log(fmt(`compare root's company, c32 [${r + 1}]`, compareRun));
    rounds.push({
      bare: bareRun,
      company: companyRun,
      ratio: r2(companyRun.req_per_s / bareRun.req_per_s),
      bareSame: bareSameRun,
      ratioSame: r2(companyRun.req_per_s / bareSameRun.req_per_s),
      ...(compareRun ? { compare: compareRun, ratioCompare: r2(compareRun.req_per_s / bareRun.req_per_s) } : {}),
    });
  }
  const serverCpuEnd = cpuUs(server.pid);
  const compareCpuEnd = compare ? cpuUs(compare.pid) : null;
  /** CPU per request over all rounds (from the first run's start to the last one's end) and the part spent outside the runs. */
  const cpuOverRounds = (start: number | null, end: number | null, runsOf: WrkResult[]) => {
    if (start === null || end === null) return null;
    const requests = runsOf.reduce((a, x) => a + x.requests, 0);
    const inRuns = runsOf.reduce((a, x) => a + (x.server_cpu_us_per_req ?? 0) * x.requests, 0);
    return {
      cpu_us_per_req_all_rounds: Math.round(((end - start) / requests) * 10) / 10,
      cpu_us_per_req_outside_runs: Math.round(((end - start - inRuns) / requests) * 10) / 10,
    };
  };
  const companyCpu = cpuOverRounds(
    serverCpuStart,
    serverCpuEnd,
    rounds.map((x) => x.company),
  );
  const compareCpu = compare
    ? cpuOverRounds(
        compareCpuStart,
        compareCpuEnd,
        rounds.map((x) => x.compare!),
      )
    : null;
  if (companyCpu)
    console.log(
      `server CPU over all rounds ${companyCpu.cpu_us_per_req_all_rounds} us/req (outside its runs ${companyCpu.cpu_us_per_req_outside_runs})${compareCpu ? `; compare root ${compareCpu.cpu_us_per_req_all_rounds} (${compareCpu.cpu_us_per_req_outside_runs})` : ''}`,
    );
  const medianBy = <T>(xs: T[], key: (x: T) => number): T => [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)]!;
  runs.bare_node_http_c32 = medianBy(
    rounds.map((x) => x.bare),
    (x) => x.req_per_s,
  );
  runs.company_c32 = medianBy(
    rounds.map((x) => x.company),
    (x) => x.req_per_s,
  );
  const ratio = medianBy(rounds, (x) => x.ratio).ratio;
  const ratioSame = medianBy(rounds, (x) => x.ratioSame).ratioSame;
  runs.bare_identical_exchange_c32 = medianBy(
    rounds.map((x) => x.bareSame),
    (x) => x.req_per_s,
  );
  const ratioCompare = compare ? medianBy(rounds, (x) => x.ratioCompare!).ratioCompare! : null;
  if (compare)
    runs.compare_company_c32 = medianBy(
      rounds.map((x) => x.compare!),
      (x) => x.req_per_s,
    );
  console.log(
    `ratio to bare ${ratio} (identical exchange ${ratioSame})${compare ? `; compare root ${compareRoot}: ratio ${ratioCompare}` : ''}`,
  );
  // BENCH_API_HOT_ONLY=1: the hot-path rounds alone (no search or quote runs).
  const hotOnly = process.env.BENCH_API_HOT_ONLY === '1';
  if (!hotOnly) {
    runs.search_uncached_c8 = runWrk(base, searchPaths, 8, headers);
    console.log(fmt('/api/search (uncached), c8', runs.search_uncached_c8));
  }
  if (hasQuotes && !hotOnly) {
    for (const t of tickers.slice(0, 200)) await (await get(`${base}/api/company/${t}/quote`, headers)).arrayBuffer();
    runs.quote_c32 = runWrk(
      base,
      tickers.slice(0, 200).map((t) => `/api/company/${t}/quote`),
      32,
      headers,
    );
    console.log(fmt('/api/company/{ticker}/quote, c32', runs.quote_c32));
  }
  const c = runs.company_c32;
  // The median round's p99 at 32 connections, and the worst round's (a single slow round shows there first).
  const p99s = rounds.map((x) => x.company.p99_us).sort((a, b) => a - b);
  const targets = {
    company_req_per_s_ge_10000: c.req_per_s >= 10_000,
    company_p99_lt_10ms: c.p99_us < 10_000,
    company_ge_half_of_bare: ratio >= 0.5,
    company_ge_085_of_bare: ratio >= 0.85,
    company_p99_c32_lt_5ms: p99s[Math.floor(p99s.length / 2)]! < 5_000,
    ...(runs.search_uncached_c8 ? { search_p99_lt_50ms: runs.search_uncached_c8.p99_us < 50_000 } : {}),
  };
  console.log('targets:', targets);
  writeResult(outName, {
    load_average_1m_at_end: Math.round(os.loadavg()[0]! * 10) / 10,
    scale,
    quotes_scale: quotesScale,
    server_node_flags: serverFlags,
    companies,
    tickers_rotated: tickers.length,
    search_queries: words.length,
    seconds_per_run: SECONDS,
    tool: 'wrk -t2',
    server_peak_rss_mb: vmHwmMb(server.pid!),
    ratio_company_to_bare: ratio,
    ratio_company_to_bare_identical_exchange: ratioSame,
    ...(compare
      ? { compare_root: compareRoot, compare_node_flags: readServeNodeFlags(compareRoot), ratio_compare_to_bare: ratioCompare }
      : {}),
    company_c32_p99_us_median_round: p99s[Math.floor(p99s.length / 2)],
    ...(companyCpu ? { company_cpu_over_rounds: companyCpu } : {}),
    ...(compareCpu ? { compare_cpu_over_rounds: compareCpu } : {}),
    company_c32_p99_us_worst_round: p99s.at(-1),
    rounds: rounds.map((x) => ({
      bare_req_per_s: x.bare.req_per_s,
      bare_p99_us: x.bare.p99_us,
      bare_cpu_us_per_req: x.bare.server_cpu_us_per_req,
      company_req_per_s: x.company.req_per_s,
      company_p99_us: x.company.p99_us,
      company_cpu_us_per_req: x.company.server_cpu_us_per_req,
      ratio: x.ratio,
      bare_identical_req_per_s: x.bareSame.req_per_s,
      bare_identical_p99_us: x.bareSame.p99_us,
      bare_identical_cpu_us_per_req: x.bareSame.server_cpu_us_per_req,
      ratio_identical: x.ratioSame,
      ...(x.compare
        ? {
            compare_req_per_s: x.compare.req_per_s,
            compare_p99_us: x.compare.p99_us,
            compare_cpu_us_per_req: x.compare.server_cpu_us_per_req,
            ratio_compare: x.ratioCompare,
          }
        : {}),
    })),
    runs,
    targets,
  });
} finally {
  bare?.kill('SIGTERM');
  bareSame?.kill('SIGTERM');
  compare?.kill('SIGTERM');
  server.kill('SIGTERM');
}
