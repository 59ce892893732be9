import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceUnavailableError } from '../../lib/errors.ts';
import { createQcMobileClient, type QcMobileClient } from '../../lib/qcmobile-client.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

const body = (name: string) => readFileSync(fixture(`fmcsa/qcmobile/${name}`), 'utf8');

describe.skipIf(!HAS_SHARED)('createQcMobileClient (real QCMobile bodies replayed locally)', () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  let flaky = 0;
  const routes: Record<string, () => { status?: number; type?: string; text: string; delayMs?: number }> = {
    '/qc/services/carriers/158121': () => ({ text: body('carriers_158121.json') }),
    '/qc/services/carriers/44110/basics': () => ({ text: body('carriers_44110_basics.json') }),
    '/qc/services/carriers/44110/docket-numbers': () => ({ text: body('carriers_44110_mc-numbers.json') }),
    '/qc/services/carriers/53467/authority': () => ({ text: body('carriers_53467_authority.json') }),
    '/qc/services/carriers/885213/oos': () => ({ text: body('carriers_885213_oos.json') }),
    '/qc/services/carriers/name/greyhound': () => ({ text: body('carriers_name_search_multi.json') }),
    '/qc/services/carriers/9999999': () => ({ text: '{"content":null,"retrievalDate":"2021-03-02T05:01:11.462+0000"}' }),
    '/qc/services/carriers/1111111': () => ({ text: body('error_webkey_not_found.json') }),
    '/qc/services/carriers/2222222': () => ({
      type: 'text/html',
      text: '<html><head><title>FMCSA System Maintenance Page</title></head><body>down</body></html>',
    }),
    '/qc/services/carriers/3333333': () => ({ text: body('carriers_158121.json'), delayMs: 400 }),
    '/qc/services/carriers/4444444': () => (++flaky < 2 ? { status: 503, text: 'busy' } : { text: body('carriers_158121.json') }),
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const u = new URL(req.url!, 'http://x');
      seen.push(req.url!);
      const route = routes[u.pathname];
      if (!route) return void res.writeHead(404).end('{}');
      const r = route();
      setTimeout(() => res.writeHead(r.status ?? 200, { 'content-type': r.type ?? 'application/json' }).end(r.text), r.delayMs ?? 0);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/qc/services`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  const client = (over: Partial<Parameters<typeof createQcMobileClient>[0]> = {}): QcMobileClient =>
    createQcMobileClient({
      baseUrl: base,
      webKey: 'test-key',
      userAgent: 'Proofline-test/1.0',
      timeoutMs: 3000,
      attempts: 2,
      backoffMs: 1,
      ...over,
    });

  it('reads /carriers/{dot} with the webKey in the query string but never in the returned url', async () => {
    const r = await client().getCarrier(158121);
    expect(r.data).toMatchObject({
      dotNumber: 158121,
      legalName: 'VERIHA TRUCKING INC',
      bipdInsuranceOnFile: '1000',
      bipdRequiredAmount: '750',
      safetyRating: 'S',
      vehicleOosRateNationalAverage: '20.72',
    });
    expect(r.url).toBe(`${base}/carriers/158121`);
    expect(r.content_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(seen.some((s) => s.startsWith('/qc/services/carriers/158121?webKey=test-key'))).toBe(true);
    await expect(JSON.stringify({ data: r.data, retrieval_date: r.retrieval_date }, null, 2)).toMatchFileSnapshot(
      '../golden/fmcsa/qcmobile-carrier-158121.json',
    );
  });

  it('parses BASICs (percentile strings, thresholds, exceeded flags) of a passenger carrier', async () => {
    const r = await client().getBasics('44110');
    const hos = r.data.find((b) => b.basicsId === 12)!;
    expect(hos).toMatchObject({ percentile: 57, threshold: 50, exceeded: true, measure: 0.18 });
    await expect(JSON.stringify(r.data, null, 2)).toMatchFileSnapshot('../golden/fmcsa/qcmobile-basics-44110.json');
  });

  it('parses OOS orders, authority, docket numbers and a name search', async () => {
    const c = client();
    const [oos, auth, dockets, search] = await Promise.all([
      c.getOos(885213),
      c.getAuthority(53467),
      c.getDocketNumbers(44110),
      c.searchByName('greyhound'),
    ]);
    expect(oos.data[0]).toEqual({
      id: 2992,
      dotNumber: 885213,
      oosDate: '2004-06-04',
      oosReason: 'NOP',
      oosReasonDescription: '90 day failure to pay fine',
    });
    expect(auth.data[0]).toMatchObject({ dotNumber: 53467, docketNumber: 138328, prefix: 'MC', brokerAuthorityStatus: 'A' });
    expect(dockets.data).toEqual([{ dotNumber: 44110, docketNumber: 1515, prefix: 'MC', docketNumberId: 125044 }]);
    expect(search.data.length).toBeGreaterThan(1);
    expect(search.data.some((x) => x.dotNumber === 753076)).toBe(true);
    await expect(
      JSON.stringify(
        {
          oos: oos.data,
          authority: auth.data,
          dockets: dockets.data,
          search: search.data.map((x) => ({ dotNumber: x.dotNumber, legalName: x.legalName })),
        },
        null,
        2,
      ),
    ).toMatchFileSnapshot('../golden/fmcsa/qcmobile-oos-authority-dockets-search.json');
  });

  it('returns data null for content: null (DOT never issued)', async () => {
    expect((await client().getCarrier(9999999)).data).toBeNull();
  });

  it('fails terminally on "Webkey not found"', async () => {
    const err = await client()
      .getCarrier(1111111)
      .catch((e) => e);
    expect(err).toBeInstanceOf(SourceUnavailableError);
    expect(err.message).toContain('Webkey not found');
    expect(err.message).not.toContain('test-key');
  });

  it('treats the HTML maintenance page as a transient outage', async () => {
    const err = await client()
      .getCarrier(2222222)
      .catch((e) => e);
    expect(err).toBeInstanceOf(SourceUnavailableError);
    expect(err.message).toMatch(/HTTP 503/);
    expect(err.message).not.toContain('test-key');
  });

  it('times out a slow answer', async () => {
    const err = await client({ attempts: 1, timeoutMs: 100 })
      .getCarrier(3333333)
      .catch((e) => e);
    expect(err).toBeInstanceOf(SourceUnavailableError);
    expect(err.message).toMatch(/timeout/);
  });

  it('retries a 503 and then succeeds', async () => {
    expect((await client({ attempts: 3 }).getCarrier(4444444)).data?.dotNumber).toBe(158121);
  });

  it('rejects a missing webKey and an invalid DOT', () => {
    expect(() => createQcMobileClient({ baseUrl: base, webKey: '', userAgent: 'x' })).toThrow(/FMCSA_WEBKEY/);
    expect(() => client().getCarrier('12ab')).toThrow(/USDOT/);
  });
});
