import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { sha256Hex } from '../../lib/hash.ts';
import { verifyChain, verifyLeaf, type OriginLeaf } from '../../lib/origin.ts';
import { saveIrDocument } from '../../jobs/transcripts/ir-client.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { copyTranscriptFixtures, ingestTranscripts, TRANSCRIPT_FIXTURES } from './transcripts-fixture.ts';

const HAS_OPENSSL = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!HAS_SHARED || !HAS_OPENSSL)('transcript endpoints over the real fixtures, with an IR fetch over TLS', () => {
  let dir: string;
  let svc: TestService;
  let server: https.Server;
  let certFingerprint: string;
  let leaves: Map<string, OriginLeaf>;

  beforeAll(async () => {
    dir = await tempDir();
    const input = path.join(dir, 'input');
    await copyTranscriptFixtures(
      input,
      TRANSCRIPT_FIXTURES.filter(([f]) => !f.startsWith('pdf/CRCL')),
    );
    // A local HTTPS "investor-relations site" with a self-signed certificate made for this test.
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const der = Buffer.from(
      readFileSync(cert, 'utf8')
        .replace(/-----[^-]+-----/g, '')
        .replace(/\s+/g, ''),
      'base64',
    );
    certFingerprint = createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g)!.join(':');
    const pdf = readFileSync(fixture('sec/transcripts/pdf/CRCL_2025Q3.pdf'));
    server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      if (req.url === '/files/CRCL_2025Q3.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(pdf);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const { record } = await saveIrDocument(
      `https://127.0.0.1:${port}/files/CRCL_2025Q3.pdf`,
      path.join(input, 'transcripts', 'pdf'),
      'CRCL_2025Q3.pdf',
      { userAgent: 'Proofline test', ca: readFileSync(cert) },
    );
    expect(record.content_sha256).toBe(sha256Hex(pdf));
    const report = await ingestTranscripts(testConfig(path.join(dir, 'data')), input);
    expect(report.children.filter((c) => c.status === 'failed').map((c) => c.error)).toEqual([]);
    svc = await buildTestService(testConfig(path.join(dir, 'data')), ['transcripts']);
    const rows = await svc.deps.readers.transcripts.query(
      `SELECT leaf_hash, kind, source, source_url, retrieved_at, content_sha256, record_sha256, parent FROM origin_leaves`,
    );
    leaves = new Map(rows.map((r) => [String(r.leaf_hash), { ...(r as any), alg: 'sha256', canon: 'rfc8785' }]));
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    server?.close();
    await removeDir(dir);
  });

  it('chains the PDF fetched over TLS: fetch → PDF → JSON and markdown extractions', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/CRCL/transcripts');
    expect(status).toBe(200);
    const t = body.transcripts[0];
    expect(t.fetch_origin).toMatchObject({
      kind: 'fetch',
      source: 'ir-site',
      parent: null,
      content_sha256: sha256Hex(readFileSync(fixture('sec/transcripts/pdf/CRCL_2025Q3.pdf'))),
    });
    expect(t.source_origin.parent).toBe(t.fetch_origin.leaf_hash);
    expect(t.origin.parent).toBe(t.source_origin.leaf_hash);
    expect(t.markdown_origin.parent).toBe(t.source_origin.leaf_hash);
    for (const l of [t.fetch_origin, t.source_origin, t.origin, t.markdown_origin]) expect(verifyLeaf(l)).toBe(true);
    const [f] = await svc.deps.readers.transcripts.query(`SELECT fetch_record FROM transcripts WHERE ticker = 'CRCL'`);
    const fetch = JSON.parse(String(f.fetch_record));
    expect(fetch.tls.fingerprint256).toBe(certFingerprint);
    expect(fetch.remote_address).toBe('127.0.0.1');
    expect(fetch.addresses).toContain('127.0.0.1');
    expect((await verifyChain(t.origin.leaf_hash, (h) => leaves.get(h))).leaves.map((l) => l.kind)).toEqual([
      'extraction',
      'source',
      'fetch',
    ]);
  });

  it('serves AAPL calls with speakers and Q&A counts, the NVDA call without Q&A, MSFT with its call dates', async () => {
    const aapl = await getJson(svc.app, '/api/company/AAPL/transcripts');
    expect(aapl.body).toMatchObject({ schema: 'proofline/sec-transcripts/v1', ticker: 'AAPL', transcript_count: 2 });
    expect(aapl.body.transcripts.map((t: any) => [t.fiscal_year, t.fiscal_quarter, t.call_date])).toEqual([
      [2023, 1, '2023-02-02'],
      [2022, 1, '2022-01-27'],
    ]);
    const nvda = await getJson(svc.app, '/api/company/NVDA/transcripts');
    expect(nvda.body.transcripts[0]).toMatchObject({ qa_present: false, qa_questions: 0, call_date: '2024-08-28' });
    const msft = await getJson(svc.app, '/api/company/MSFT/transcripts');
    expect(msft.body.transcripts[0].call_date).toBe('2022-10-25');
    expect(msft.body.call_dates).toHaveLength(20);
    expect((await getJson(svc.app, '/api/company/ZZZZ/transcripts')).status).toBe(404);
  });

  it('serves facts by type and topic, each with speaker, snippet and an origin chained to its extraction', async () => {
    const { body } = await getJson(svc.app, '/api/company/NVDA/facts?topic=ai&type=guidance');
    expect(body.fact_count).toBeGreaterThan(0);
    for (const f of body.facts) expect(f).toMatchObject({ topic: 'ai', type: 'guidance', snippet: expect.any(String) });
    const t = await getJson(svc.app, '/api/company/NVDA/transcripts');
    expect(body.facts[0].origin.parent).toBe(t.body.transcripts[0].origin.leaf_hash);
    expect((await getJson(svc.app, '/api/company/NVDA/facts?topic=weather')).status).toBe(400);
  });

  it('searches transcripts by topic with the first-mention date per company', async () => {
    const { body } = await getJson(svc.app, '/api/search/transcripts?topic=blockchain&first=true');
    expect(body.topics[0].topic).toBe('blockchain');
    expect(body.topics[0].companies.find((c: any) => c.ticker === 'CRCL')).toMatchObject({ first_mention_date: '2025-11-12' });
    const ai = await getJson(svc.app, '/api/search/transcripts?topic=ai');
    expect(ai.body.topics[0].companies.map((c: any) => c.ticker)).toEqual(expect.arrayContaining(['NVDA', 'MSFT']));
    expect(ai.body.facts.length).toBeGreaterThan(0);
  });
});

describe('IR client without a server', () => {
  it('maps a refused connection to SourceUnavailableError', async () => {
    await expect(saveIrDocument('https://127.0.0.1:1/x.pdf', '/tmp', 'x.pdf', { userAgent: 'test', timeoutMs: 2000 })).rejects.toThrow(
      /failed|timeout/,
    );
    expect(existsSync('/tmp/x.pdf')).toBe(false);
  });
});
