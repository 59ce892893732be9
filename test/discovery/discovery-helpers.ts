/**
 * Helpers of the discovery suites: a tiny registry warehouse for the
 * publisher (three companies from the deterministic sample: ingest in ~1 s),
 * and local "sites" served by node:http on 127.0.0.1 whose routes a test can
 * change between visits.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { fmcsaSampleGenerator } from '../../ingest/fmcsa/fmcsa.sample.ts';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import type { Config } from '../../lib/config.ts';
import { canonicalJson, sha256Hex } from '../../lib/hash.ts';
import { ingestAll } from '../helpers/app.ts';
import { tempDir, testConfig } from '../helpers/env.ts';

/** The first `rows` carriers of the sample FMCSA census (header included), read lazily from the generator. */
async function tinyCensus(rows: number): Promise<string> {
  for await (const f of fmcsaSampleGenerator.generate({ scale: 'small', seed: 42 })) {
    if (!f.path.endsWith('Company_Census_File.csv')) continue;
    let text = '';
    const chunks = typeof f.content === 'string' || f.content instanceof Uint8Array ? [f.content] : f.content;
    for await (const c of chunks) {
      text += typeof c === 'string' ? c : Buffer.from(c).toString('utf8');
      if (text.split('\n').length > rows + 1) break;
    }
    return (
      text
        .split('\n')
        .slice(0, rows + 1)
        .join('\n') + '\n'
    );
  }
  throw new Error('the FMCSA sample has no census file');
}

/**
 * A data dir with the registry domain published from AAPL, MSFT and NVDA of
 * the small sample, and (with `fmcsa`) the fmcsa domain from its first 30
 * census rows. Returns the DOT numbers of those carriers.
 */
export async function tinyRegistry(opts: { fmcsa?: boolean } = {}): Promise<{ dir: string; config: Config; dots: number[] }> {
  const dir = await tempDir('proofline-discovery-');
  const sample = path.join(dir, 'sample');
  await ensureSample(sample, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
  const tiny = path.join(dir, 'tiny', 'sec');
  await mkdir(path.join(tiny, 'submissions'), { recursive: true });
  await cp(path.join(sample, 'sec', 'tickers'), path.join(tiny, 'tickers'), { recursive: true });
  for (const c of ['CIK0000320193.json', 'CIK0000789019.json', 'CIK0001045810.json'])
    await cp(path.join(sample, 'sec', 'submissions', c), path.join(tiny, 'submissions', c));
  const config = testConfig(path.join(dir, 'data'));
  let dots: number[] = [];
  if (opts.fmcsa) {
    const census = await tinyCensus(30);
    await mkdir(path.join(dir, 'tiny', 'fmcsa', 'census'), { recursive: true });
    await writeFile(path.join(dir, 'tiny', 'fmcsa', 'census', 'Company_Census_File.csv'), census);
    const lines = census.trim().split('\n');
    const col = lines[0].split(',').indexOf('DOT_NUMBER');
    dots = lines.slice(1).map((l) => Number(l.split(',')[col]));
  }
  await ingestAll(config, opts.fmcsa ? [registryPipeline, fmcsaPipeline] : [registryPipeline], path.join(dir, 'tiny'));
  return { dir, config, dots };
}

export interface Route {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (timeout tests). */
  hang?: boolean;
  /** Send headers, then one byte of body every this many ms, forever (slow-body tests). */
  trickleMs?: number;
}

export interface Site {
  url: string;
  routes: Map<string, Route>;
  /** Every path requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves `routes` (path → response) on 127.0.0.1; unknown paths are 404 text. */
export async function serveSite(routes: Record<string, Route> = {}): Promise<Site> {
  const map = new Map(Object.entries(routes));
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(p);
    const r = map.get(p) ?? { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
    if (r.hang) return;
    if (r.trickleMs) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => res.write(' '), r.trickleMs);
      res.on('close', () => clearInterval(t));
      return;
    }
    res.writeHead(r.status ?? 200, r.headers ?? {});
    res.end(req.method === 'HEAD' ? undefined : (r.body ?? ''));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routes: map,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const json = (doc: unknown, headers: Record<string, string> = {}): Route => ({
  status: 200,
  headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*', ...headers },
  body: JSON.stringify(doc, null, 2),
});
export const html = (body: string, headers: Record<string, string> = {}): Route => ({
  status: 200,
  headers: { 'content-type': 'text/html; charset=utf-8', ...headers },
  body,
});

/** Adds a tier-2 `_signature` (RFC 8785 contentHash) to `doc`, computed independently of the code under test. */
export function sealed<T extends Record<string, unknown>>(doc: T, extra: Record<string, unknown> = {}): T {
  const { _signature: _s, ...body } = doc;
  return { ...(body as T), _signature: { contentHash: `sha256:${sha256Hex(canonicalJson(body))}`, canonicalization: 'RFC8785', ...extra } };
}

export function hashOf(doc: Record<string, unknown>): string {
  const { _signature: _s, ...body } = doc;
  return `sha256:${sha256Hex(canonicalJson(body))}`;
}

/** A minimal valid ai-discovery 1.1.1 manifest for a fixture site. */
export function manifestFor(base: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    specVersion: '1.1.1-draft',
    schemaVersion: '2026-02',
    standard: 'ai-discovery',
    generated: '2026-11-01T00:00:00Z',
    organization: { name: 'Fixture Co', domain: '127.0.0.1', mission: 'Test fixtures.', sector: ['testing'] },
    coreConcepts: [{ term: 'fixture', definition: 'A thing for tests.' }],
    capabilities: {
      knowledge: { available: true, url: `${base}/ai/knowledge.json`, auth: 'none', rateLimit: 'none', languages: ['en'], safety: 'none' },
      archive: { available: true, url: '/.well-known/archive', auth: 'none', rateLimit: 'none', languages: ['en'], safety: 'none' },
    },
    ...extra,
  };
}
