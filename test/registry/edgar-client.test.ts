import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { readFile as readFileP } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { InvalidInputError, SourceUnavailableError } from '../../lib/errors.ts';
import type { RateLimiter } from '../../lib/http-client.ts';
import { EdgarClient, fetchEdgarInputs } from '../../jobs/registry/edgar-client.ts';
import { readInput } from '../../jobs/inputs.ts';

const UA = 'Proofline Tests tests@proofline.example';

/** Replays fixtures like data.sec.gov / www.sec.gov; the first request to /rate-limited/* gets the SEC 403 page. */
function startServer(): Promise<{ server: Server; base: string; requests: IncomingMessage[]; hits: Map<string, number> }> {
  const requests: IncomingMessage[] = [];
  const hits = new Map<string, number>();
  const page403 = readFileSync(fixture('sec/filings/errors/sec-rate-exceeded-403.html'));
  const server = createServer((req, res) => {
    requests.push(req);
    const url = req.url ?? '/';
    const n = (hits.get(url) ?? 0) + 1;
    hits.set(url, n);
    if (!req.headers['user-agent']?.includes('@')) return void res.writeHead(403).end('undeclared tool');
    if (url.startsWith('/flaky') && n === 1) return void res.writeHead(503).end('busy');
    if (url.includes('RATE') && n === 1) return void res.writeHead(403, { 'content-type': 'text/html' }).end(page403);
    const p = url.split('?')[0];
    const sub = /^\/submissions\/(CIK\d{10})\.json$/.exec(p);
    const facts = /^\/api\/xbrl\/companyfacts\/(CIK\d{10})\.json$/.exec(p);
    const file = sub
      ? fixture(`sec/submissions/${sub[1]}.json`)
      : facts
        ? fixture(`sec/companyfacts/${facts[1]}.json`)
        : p === '/files/company_tickers_exchange.json'
          ? fixture('sec/tickers/company_tickers_exchange.json')
          : null;
    if (!file) return void res.writeHead(404).end('not found');
    readFileP(file).then(
      (b) => res.writeHead(200, { 'content-type': 'application/json' }).end(b),
      () => res.writeHead(404).end('not found'),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address() as { port: number };
      resolve({ server, base: `http://127.0.0.1:${a.port}`, requests, hits });
    }),
  );
}

class CountingLimiter implements RateLimiter {
  calls = 0;
  pauses: number[] = [];
  async acquire(): Promise<void> {
    this.calls++;
  }
  async pause(ms: number): Promise<void> {
    this.pauses.push(ms);
  }
}

describe.skipIf(!HAS_SHARED)('EdgarClient', () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  let dir: string;
  beforeAll(async () => {
    srv = await startServer();
    dir = await tempDir('proofline-edgar-fetch-');
  });
  afterAll(async () => {
    await new Promise((r) => srv.server.close(r));
    await removeDir(dir);
  });
  const client = (limiter: RateLimiter, extra = {}) =>
    new EdgarClient({ userAgent: UA, wwwBaseUrl: srv.base, dataBaseUrl: srv.base, limiter, backoffMs: 1, pauseMs: 50, ...extra });

  it('refuses to start a live fetch without a declared SEC_USER_AGENT', () => {
    expect(() => new EdgarClient({ userAgent: undefined })).toThrow(InvalidInputError);
    expect(() => new EdgarClient({ userAgent: 'curl/8' })).toThrow(/SEC_USER_AGENT/);
  });

  it('downloads submissions and companyfacts with sidecars that the ingest reads into origin leaves', async () => {
    const limiter = new CountingLimiter();
    const report = await fetchEdgarInputs(client(limiter), { inputDir: dir, ciks: [320193, 1652044], tickers: true });
    expect(report.failed).toEqual([]);
    // GOOGL has no submissions fixture: reported as missing, the rest lands.
    expect(report.missing.map((m) => m.url)).toEqual([`${srv.base}/submissions/CIK0001652044.json`]);
    expect(report.written.map((f) => path.relative(dir, f)).sort()).toEqual([
      'sec/companyfacts/CIK0000320193.json',
      'sec/companyfacts/CIK0001652044.json',
      'sec/submissions/CIK0000320193.json',
      'sec/tickers/company_tickers_exchange.json',
    ]);
    expect(limiter.calls).toBe(5);
    expect(srv.requests.every((r) => r.headers['user-agent'] === UA)).toBe(true);
    const meta = JSON.parse(await readFileP(path.join(dir, 'sec/submissions/CIK0000320193.json.meta.json'), 'utf8'));
    expect(meta.source_url).toBe(`${srv.base}/submissions/CIK0000320193.json`);
    expect(meta.retrieved_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const { src } = await readInput(path.join(dir, 'sec/submissions/CIK0000320193.json'), 'sec-edgar/submissions');
    expect(src).toMatchObject({ source_url: meta.source_url, retrieved_at: meta.retrieved_at, content_sha256: meta.sha256 });
  });

  it('retries a transient 503 with backoff', async () => {
    const limiter = new CountingLimiter();
    const c = client(limiter);
    const res = await c.get(c.www, '/flaky/files/company_tickers_exchange.json').catch((e) => e);
    // The first attempt got a 503, the second reached the server again (and found no such file: 404).
    expect(srv.hits.get('/flaky/files/company_tickers_exchange.json')).toBe(2);
    expect(limiter.calls).toBe(2);
    expect(res.constructor.name).toBe('NotFoundError');
  });

  it('pauses the shared limiter on the SEC 403 rate-limit page, then retries', async () => {
    const limiter = new CountingLimiter();
    const c = client(limiter);
    const t0 = Date.now();
    const res = await c.get(c.data, '/submissions/CIK0000320193.json?RATE=1');
    expect(res.status).toBe(200);
    expect(limiter.pauses).toEqual([50]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(srv.hits.get('/submissions/CIK0000320193.json?RATE=1')).toBe(2);
  });

  it('gives up with a transient error when the rate limit persists past the allowed pauses', async () => {
    const limiter = new CountingLimiter();
    const c = client(limiter, { maxPauses: 0 });
    await expect(c.get(c.data, '/submissions/CIK0000320193.json?RATE=2')).rejects.toBeInstanceOf(SourceUnavailableError);
  });

  it('does not retry a plain 403 (rejected User-Agent)', async () => {
    const limiter = new CountingLimiter();
    const c = new EdgarClient({
      userAgent: 'Nobody nobody@example.com',
      dataBaseUrl: srv.base,
      limiter,
      backoffMs: 1,
      fetch: (u, init) => fetch(u, { ...init, headers: { 'user-agent': 'anonymous' } }),
    });
    await expect(c.submissions(320193)).rejects.toMatchObject({ context: expect.objectContaining({ status: 403 }) });
    expect(limiter.pauses).toEqual([]);
  });
});
