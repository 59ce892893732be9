/**
 * The replay server: one local HTTP server (127.0.0.1, any port) that answers at the real URL paths of the
 * outside sources with recorded real bodies from ../shared/fixtures. Tests point SEC_WWW_BASE_URL,
 * SEC_DATA_BASE_URL (and the Polygon base URL) at it; nothing touches the network.
 *
 *   EDGAR (www.sec.gov and data.sec.gov on one port)
 *     /files/company_tickers_exchange.json                  tickers/ (with an ETag; If-None-Match → 304)
 *     /submissions/CIK##########.json                        submissions/
 *     /api/xbrl/companyfacts/CIK##########.json              companyfacts/
 *     /Archives/edgar/data/{cik}/{accession}.txt             every complete submission (`<SEC-DOCUMENT>` .txt) in
 *                                                            the fixtures, under the CIK of each entity of its header
 *     /Archives/edgar/daily-index/{Y}/QTR{q}/master.{D}.idx  the real daily index files of index/daily/ on their
 *                                                            day; for the other days, a master index of the
 *                                                            fixtures' complete submissions filed that day, built
 *                                                            from their real SGML headers in the SEC's master
 *                                                            format (one row per entity, as EDGAR lists them);
 *                                                            404 for a day with neither (weekends, holidays)
 *     /Archives/edgar/daily-index/bulkdata/submissions.zip   a zip of the fixtures' submissions JSON files (real bodies,
 *     /Archives/edgar/daily-index/xbrl/companyfacts.zip       zipped here as the SEC zips them: one entry per file)
 *   FMCSA / DOT open-data portal
 *     /api/views/kjg3-diqy/rows.csv                          the real SMS input census sample (fmcsa/census/), with an ETag
 *     /fmcsa-files/{path}                                    any file of fmcsa/ (the SMS zip, the L&I revocation file)
 *   Investor-relations sites
 *     /ir/{file}.pdf                                         the recorded transcript PDFs of sec/transcripts/pdf/
 *   Polygon
 *     /v2/aggs/grouped/locale/us/market/stocks/{date}        the recorded grouped-daily response of that date
 *
 * Faults are injected per path (`fault(path, spec)`): a status with a body (503, or the SEC's real 403
 * rate-limit page), `hang` (no answer: the client's timeout), `truncate` (the body cut in half, sent as a complete
 * chunked response), `html200` (an HTML error page with status 200). Every request is recorded with its time, so a
 * test can count the SEC requests in any one-second window.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { zipSync } from 'fflate';
import { parseSgmlHeader } from '../../ingest/edgar/sgml.ts';

export interface ReplayHit {
  path: string;
  at: number;
  status: number;
  userAgent: string | undefined;
}

export type FaultSpec = { times: number } & ({ status: number; body?: string } | { mode: 'hang' | 'truncate' | 'html200' });

export interface ReplayServer {
  baseUrl: string;
  hits: ReplayHit[];
  /** Requests per path. */
  count(p: string): number;
  /** Injects a fault on a path for its next `times` requests. */
  fault(p: string, spec: FaultSpec): void;
  /** Replaces the body served at a path, or at one query of it (`path?adjusted=false`); null: answers 404. */
  override(p: string, body: Buffer | string | null): void;
  /** Serves the recorded body at a path again (drops its override). */
  restore(p: string): void;
  /** The most SEC requests (www + data) seen in any window of `windowMs` (default 1000). */
  maxSecRate(windowMs?: number): number;
  /** Days (YYYY-MM-DD) with a daily index, and the complete submissions known, by accession. */
  world: { indexDays: string[]; submissions: Map<string, { file: string; ciks: number[]; form: string; filed: string }> };
  close(): Promise<void>;
}

/** Portal dataset ids with a recorded export in the fixtures. */
const PORTAL: Record<string, string> = { 'kjg3-diqy': 'census/sms_input_census_kjg3-diqy_sample1000.csv' };

const HTML_ERROR =
  '<!DOCTYPE html><html><head><title>Service Unavailable</title></head><body><h1>We are performing maintenance</h1></body></html>';

function walkFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walkFiles(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Indexes the fixtures: complete submissions by accession (with their entities) and the real daily indexes by day. */
function buildWorld(secRoot: string) {
  const submissions = new Map<string, { file: string; ciks: number[]; form: string; filed: string; names: Map<number, string> }>();
  for (const f of walkFiles(secRoot)) {
    if (!f.endsWith('.txt')) continue;
    const head = readFileSync(f).subarray(0, 16384).toString('latin1');
    if (!head.startsWith('<SEC-DOCUMENT>')) continue;
    const h = parseSgmlHeader(head);
    if (!h?.accession || !h.form || !h.filed) continue;
    const names = new Map<number, string>();
    for (const e of h.entities) if (!names.has(e.cik)) names.set(e.cik, e.name ?? '');
    submissions.set(h.accession, { file: f, ciks: [...names.keys()], form: h.form, filed: h.filed, names });
  }
  const realIndex = new Map<string, string>();
  const dailyDir = path.join(secRoot, 'index', 'daily');
  for (const n of readdirSync(dailyDir)) {
    const m = /^master\.(\d{4})(\d{2})(\d{2})\.idx$/.exec(n);
    if (m) realIndex.set(`${m[1]}-${m[2]}-${m[3]}`, path.join(dailyDir, n));
  }
  return { submissions, realIndex };
}

/** A master index body for `day` in the SEC's format (header text and dashed rule as in the real files). */
function masterIndexOf(day: string, rows: Array<{ cik: number; name: string; form: string; accession: string }>): string {
  const d = new Date(`${day}T00:00:00Z`);
  const received = `${d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' })} ${String(d.getUTCDate()).padStart(2, ' ')}, ${d.getUTCFullYear()}`;
  const lines = rows
    .sort((a, b) => String(a.cik).localeCompare(String(b.cik)) || a.accession.localeCompare(b.accession))
    .map((r) => `${r.cik}|${r.name}|${r.form}|${day.replace(/-/g, '')}|edgar/data/${r.cik}/${r.accession}.txt`);
  return [
    'Description:           Daily Index of EDGAR Dissemination Feed',
    `Last Data Received:    ${received}`,
    'Comments:              webmaster@sec.gov',
    'Anonymous FTP:         ftp://ftp.sec.gov/edgar/',
    ' ',
    'CIK|Company Name|Form Type|Date Filed|File Name',
    '--------------------------------------------------------------------------------',
    ...lines,
    '',
  ].join('\n');
}

export async function startReplayServer(fixturesRoot: string): Promise<ReplayServer> {
  const secRoot = path.join(fixturesRoot, 'sec');
  const { submissions, realIndex } = buildWorld(secRoot);
  // Day → index body.
  const indexByDay = new Map<string, Buffer>();
  const byDay = new Map<string, Array<{ cik: number; name: string; form: string; accession: string }>>();
  for (const [accession, s] of submissions) {
    for (const cik of s.ciks)
      byDay.set(s.filed, [...(byDay.get(s.filed) ?? []), { cik, name: s.names.get(cik) ?? '', form: s.form, accession }]);
  }
  for (const [day, rows] of byDay) indexByDay.set(day, Buffer.from(masterIndexOf(day, rows)));
  for (const [day, file] of realIndex) indexByDay.set(day, readFileSync(file));
  const byPath = new Map<string, string>();
  for (const [accession, s] of submissions) for (const cik of s.ciks) byPath.set(`/Archives/edgar/data/${cik}/${accession}.txt`, s.file);
  const grouped = new Map<string, string>();
  const polyDir = path.join(secRoot, 'quotes', 'polygon-mocks');
  for (const n of readdirSync(polyDir)) {
    const m = /^v2__aggs__grouped__locale__us__market__stocks__(\d{4}-\d{2}-\d{2})_adjusted-(true|false)\.json$/.exec(n);
    if (m) grouped.set(`${m[1]}|${m[2]}`, path.join(polyDir, n));
  }

  const zips = new Map<string, Buffer>();
  const bulkZip = (kind: 'submissions' | 'companyfacts') => {
    if (!zips.has(kind)) {
      const dir = path.join(secRoot, kind);
      const entries = Object.fromEntries(
        readdirSync(dir)
          .filter((n) => /^CIK\d{10}(-submissions-\d{3})?\.json$/.test(n))
          .sort()
          .map((n) => [n, new Uint8Array(readFileSync(path.join(dir, n)))]),
      );
      zips.set(kind, Buffer.from(zipSync(entries, { level: 6 })));
    }
    return zips.get(kind)!;
  };
  const hits: ReplayHit[] = [];
  const faults = new Map<string, FaultSpec & { used: number }>();
  const overrides = new Map<string, Buffer | null>();

  const resolve = (p: string, query: URLSearchParams): { body: Buffer; type: string } | null => {
    // An override of one query (`path?adjusted=false`, the API key left out) wins over one of the path.
    const asked = new URLSearchParams(query);
    asked.delete('apiKey');
    for (const k of [`${p}?${asked.toString()}`, p]) {
      if (!overrides.has(k)) continue;
      const o = overrides.get(k);
      return o ? { body: o, type: 'text/plain' } : null;
    }
    const sub = /^\/submissions\/(CIK\d{10}(?:-submissions-\d{3})?\.json)$/.exec(p);
    const facts = /^\/api\/xbrl\/companyfacts\/(CIK\d{10}\.json)$/.exec(p);
    const idx = /^\/Archives\/edgar\/daily-index\/(\d{4})\/QTR([1-4])\/master\.(\d{4})(\d{2})(\d{2})\.idx$/.exec(p);
    const poly = /^\/v2\/aggs\/grouped\/locale\/us\/market\/stocks\/(\d{4}-\d{2}-\d{2})$/.exec(p);
    const read = (f: string, type: string) => {
      try {
        return { body: readFileSync(f), type };
      } catch {
        return null;
      }
    };
    const view = /^\/api\/views\/([a-z0-9]{4}-[a-z0-9]{4})\/rows\.csv$/.exec(p);
    if (view) return PORTAL[view[1]!] ? read(path.join(fixturesRoot, 'fmcsa', PORTAL[view[1]!]!), 'text/csv') : null;
    if (p.startsWith('/fmcsa-files/') && !p.includes('..'))
      return read(path.join(fixturesRoot, 'fmcsa', decodeURIComponent(p.slice('/fmcsa-files/'.length))), 'application/octet-stream');
    const ir = /^\/ir\/([A-Za-z0-9_.-]+\.pdf)$/.exec(p);
    if (ir) return read(path.join(secRoot, 'transcripts', 'pdf', ir[1]!), 'application/pdf');
    if (p === '/Archives/edgar/daily-index/bulkdata/submissions.zip') return { body: bulkZip('submissions'), type: 'application/zip' };
    if (p === '/Archives/edgar/daily-index/xbrl/companyfacts.zip') return { body: bulkZip('companyfacts'), type: 'application/zip' };
    if (sub) return read(path.join(secRoot, 'submissions', sub[1]!), 'application/json');
    if (facts) return read(path.join(secRoot, 'companyfacts', facts[1]!), 'application/json');
    if (p === '/files/company_tickers_exchange.json')
      return read(path.join(secRoot, 'tickers', 'company_tickers_exchange.json'), 'application/json');
    if (idx) {
      const body = indexByDay.get(`${idx[3]}-${idx[4]}-${idx[5]}`);
      return body ? { body, type: 'text/plain' } : null;
    }
    if (byPath.has(p)) return read(byPath.get(p)!, 'text/plain');
    // Polygon v3 splits / dividends: the recorded listing, filtered to the asked day as the real API filters
    // (`execution_date=` / `ex_dividend_date=`); a day without actions answers `results: []`.
    const ref = /^\/v3\/reference\/(splits|dividends)$/.exec(p);
    if (ref) {
      const doc = JSON.parse(readFileSync(path.join(polyDir, `v3__reference__${ref[1]}.json`), 'utf8'));
      const field = ref[1] === 'splits' ? 'execution_date' : 'ex_dividend_date';
      const day = query.get(field);
      if (day) doc.results = doc.results.filter((r: Record<string, unknown>) => r[field] === day);
      return { body: Buffer.from(JSON.stringify(doc, null, 4)), type: 'application/json' };
    }
    if (poly) {
      const f = grouped.get(`${poly[1]}|${query.get('adjusted') ?? 'true'}`);
      return f ? read(f, 'application/json') : null;
    }
    return null;
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://replay');
    const p = u.pathname;
    const hit: ReplayHit = { path: p, at: Date.now(), status: 200, userAgent: req.headers['user-agent'] };
    hits.push(hit);
    const send = (status: number, body: string | Buffer, headers: Record<string, string> = {}) => {
      hit.status = status;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
    };
    const f = faults.get(p);
    if (f && f.used < f.times) {
      f.used++;
      if ('status' in f) return send(f.status, f.body ?? 'service unavailable', { 'content-type': 'text/html' });
      if (f.mode === 'hang') {
        hit.status = 0;
        return; // never answers: the client's timeout fires
      }
      if (f.mode === 'html200') return send(200, HTML_ERROR, { 'content-type': 'text/html' });
      const found = resolve(p, u.searchParams);
      if (!found) return send(404, 'not found');
      // A body cut in half, delivered as a complete chunked response: nothing at the transport level says so.
      hit.status = 200;
      res.writeHead(200, {
        'content-type': found.type,
        'transfer-encoding': 'chunked',
        etag: `"${createHash('sha256').update(found.body).digest('hex').slice(0, 32)}"`,
      });
      res.end(found.body.subarray(0, Math.floor(found.body.length / 2)));
      return;
    }
    const found = resolve(p, u.searchParams);
    if (!found) return send(404, 'not found');
    const etag = `"${createHash('sha256').update(found.body).digest('hex').slice(0, 32)}"`;
    if (req.headers['if-none-match'] === etag) return send(304, '', { etag });
    send(200, found.body, { 'content-type': found.type, etag });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const isSec = (h: ReplayHit) => /^\/(files|submissions|api\/xbrl|Archives)\//.test(h.path);
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    count: (p) => hits.filter((h) => h.path === p).length,
    fault: (p, spec) => faults.set(p, { ...spec, used: 0 }),
    override: (p, body) => overrides.set(p, typeof body === 'string' ? Buffer.from(body) : body),
    restore: (p) => overrides.delete(p),
    maxSecRate(windowMs = 1000) {
      const times = hits
        .filter(isSec)
        .map((h) => h.at)
        .sort((a, b) => a - b);
      let best = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i]! - times[j]! >= windowMs) j++;
        best = Math.max(best, i - j + 1);
      }
      return best;
    },
    world: {
      indexDays: [...indexByDay.keys()].sort(),
      submissions: new Map([...submissions].map(([a, s]) => [a, { file: s.file, ciks: s.ciks, form: s.form, filed: s.filed }])),
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
