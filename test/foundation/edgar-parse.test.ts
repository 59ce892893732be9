import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../lib/errors.ts';
import { parseFilingPage, parseSubmissions } from '../../ingest/edgar/submissions.ts';
import { parseTickers, tickerSnapshotDate } from '../../ingest/edgar/tickers.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

const read = (rel: string) => readFileSync(fixture(rel));

describe.skipIf(!HAS_SHARED)('parseTickers on the real SEC ticker files', () => {
  it('maps every row of company_tickers_exchange.json with CIK as integer and padded string', async () => {
    const file = fixture('sec/tickers/company_tickers_exchange.json');
    const parsed = parseTickers(read('sec/tickers/company_tickers_exchange.json'), file);
    expect(parsed.format).toBe('company_tickers_exchange');
    expect(parsed.rows).toHaveLength(10218);
    expect(parsed.rejects).toEqual([]);
    expect(parsed.rows[1]).toEqual({
      cik: 320193,
      cik_padded: '0000320193',
      ticker: 'AAPL',
      name: 'Apple Inc.',
      exchange: 'Nasdaq',
      rank: 1,
    });
    await expect(JSON.stringify(parsed.rows.slice(0, 25), null, 1)).toMatchFileSnapshot(
      '../golden/foundation/company_tickers_exchange.head.json',
    );
  });
  it('keeps all 16 Fannie Mae tickers under one CIK and null exchanges', () => {
    const parsed = parseTickers(read('sec/tickers/company_tickers_exchange.json'), 'x');
    expect(parsed.rows.filter((r) => r.cik === 310522).map((r) => r.ticker)).toHaveLength(16);
    expect(parsed.rows.some((r) => r.exchange === null)).toBe(true);
    expect(parsed.rows.some((r) => r.ticker === 'TWO-PA')).toBe(true);
  });
  it('reads the plain company_tickers.json format too', () => {
    const parsed = parseTickers(read('sec/tickers/company_tickers.json'), 'x');
    expect(parsed.format).toBe('company_tickers');
    expect(parsed.rows[0]).toMatchObject({ cik: 1045810, ticker: 'NVDA', exchange: null });
  });
  it('dates snapshots by file name', () => {
    expect(tickerSnapshotDate('company_tickers_exchange.2023-05.json', '')).toBe('2023-05-01');
    expect(tickerSnapshotDate('company_tickers_exchange.json', '')).toBe('');
  });
});

describe.skipIf(!HAS_SHARED)('parseSubmissions on real EDGAR submissions', () => {
  it('maps Apple identity and each recent filing to one row', async () => {
    const p = parseSubmissions(read('sec/submissions/CIK0000320193.json'), 'CIK0000320193.json');
    expect(p.company).toMatchObject({
      cik: 320193,
      cik_padded: '0000320193',
      name: 'Apple Inc.',
      sic: '3571',
      sic_description: 'Electronic Computers',
      state_of_incorporation: 'CA',
      fiscal_year_end: '0926',
      tickers: ['AAPL'],
    });
    expect(p.company.business_address).toMatchObject({ city: 'CUPERTINO', state_or_country: 'CA' });
    expect(p.company.filing_pages).toEqual(['CIK0000320193-submissions-001.json']);
    expect(p.filings.length).toBeGreaterThan(900);
    expect(p.rejects).toEqual([]);
    await expect(JSON.stringify({ company: p.company, first_filings: p.filings.slice(0, 5) }, null, 1)).toMatchFileSnapshot(
      '../golden/foundation/submissions-aapl.rows.json',
    );
  });
  it('handles a CIK with many tickers (Fannie Mae, 16 OTC tickers)', () => {
    const p = parseSubmissions(read('sec/submissions/CIK0000310522.json'), 'x');
    expect(p.company.tickers).toHaveLength(16);
    expect(p.company.exchanges.every((e) => e === 'OTC')).toBe(true);
    expect(p.company.state_of_incorporation).toBeNull();
  });
  it('handles an entity with no ticker and odd characters (CIK 350001)', async () => {
    const p = parseSubmissions(read('sec/submissions/CIK0000350001.json'), 'x');
    expect(p.company.tickers).toEqual([]);
    expect(p.company.name).toContain('Company Name Three');
    await expect(JSON.stringify(p.company, null, 1)).toMatchFileSnapshot('../golden/foundation/submissions-350001.company.json');
  });
  it('parses an overflow page of bare column arrays, taking the CIK from the file name', () => {
    const p = parseFilingPage(read('sec/submissions/CIK0001318605-submissions-001.json'), 'CIK0001318605-submissions-001.json');
    expect(p.cik).toBe(1318605);
    expect(p.filings.length).toBeGreaterThan(100);
    expect(p.filings[0].accession).toMatch(/^\d{10}-\d{2}-\d{6}$/);
  });
});

describe('parseSubmissions on bad input', () => {
  it('names the file and position of malformed JSON', () => {
    try {
      parseSubmissions('{"cik": "0000320193", "name": ', 'bad/CIK0000000001.json');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ParseError);
      expect((e as ParseError).context).toMatchObject({ file: 'bad/CIK0000000001.json' });
      expect(typeof (e as ParseError).context.position).toBe('number');
    }
  });
  it('rejects an empty file', () => {
    expect(() => parseTickers('', 'empty.json')).toThrow(/empty file/);
  });
  it('rejects a filing with a malformed accession and keeps the rest', () => {
    const doc = {
      cik: '1',
      name: 'X',
      filings: {
        recent: { accessionNumber: ['0000000001-24-000001', 'garbage'], filingDate: ['2024-01-02', '2024-01-03'], form: ['8-K', '8-K'] },
        files: [],
      },
    };
    const p = parseSubmissions(JSON.stringify(doc), 'x.json');
    expect(p.filings).toHaveLength(1);
    expect(p.rejects).toHaveLength(1);
    expect(p.rejects[0].pointer).toBe('/filings/recent/accessionNumber/1');
  });
});
