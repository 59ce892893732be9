import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { parseCompanyFacts } from '../../ingest/edgar/companyfacts.ts';
import { classifyDocument, pathHints } from '../../ingest/edgar/documents.ts';
import { parseEdgarIndex } from '../../ingest/edgar/edgar-index.ts';
import { parseEightK } from '../../ingest/edgar/eight-k.ts';
import { displayName, parseOwnership } from '../../ingest/edgar/ownership.ts';
import { easternToUtc, parseSgmlHeader } from '../../ingest/edgar/sgml.ts';
import { parseTenK } from '../../ingest/edgar/ten-k.ts';
import { ParseError } from '../../lib/errors.ts';

const read = (rel: string) => readFileSync(fixture(`sec/${rel}`));

describe.skipIf(!HAS_SHARED)('parseCompanyFacts', () => {
  const metric = (file: string, m: string) => parseCompanyFacts(read(`companyfacts/${file}`), file).metrics.find((x) => x.metric === m);

  it('falls back to us-gaap:CommonStockSharesOutstanding for Alphabet (no dei cover fact)', () => {
    const s = metric('CIK0001652044.json', 'shares_outstanding')!;
    expect(s).toMatchObject({
      taxonomy: 'us-gaap',
      concept: 'CommonStockSharesOutstanding',
      is_fallback: true,
      value: 12_116_000_000,
      accession: '0001652044-26-000048',
    });
  });

  it('prefers the dei cover-page shares and picks the latest period for Apple', () => {
    expect(metric('CIK0000320193.json', 'shares_outstanding')).toMatchObject({
      concept: 'EntityCommonStockSharesOutstanding',
      period_end: '2026-01-16',
      is_fallback: false,
    });
    expect(metric('CIK0000320193.json', 'public_float')).toMatchObject({ concept: 'EntityPublicFloat', form: '10-K' });
  });

  it('reads gzip companyfacts (MSFT) and ignores proxy pay-versus-performance facts', () => {
    expect(metric('CIK0000789019.json.gz', 'revenue')).toMatchObject({ value: 281_724_000_000, form: '10-K', period_kind: 'annual' });
    expect(metric('CIK0001045810.json', 'net_income')!.form).toBe('10-K');
  });

  it('follows a concept switch (NVIDIA revenue moved to us-gaap:Revenues)', () => {
    expect(metric('CIK0001045810.json', 'revenue')).toMatchObject({ concept: 'Revenues', period_end: '2026-01-25' });
  });

  it('reads ifrs-full for a foreign filer', () => {
    const r = parseCompanyFacts(read('companyfacts/CIK0001997711.json'), 'lpa');
    expect(r.taxonomies).toContain('ifrs-full');
    expect(r.metrics.find((m) => m.metric === 'net_income')).toMatchObject({
      taxonomy: 'ifrs-full',
      concept: 'ProfitLoss',
      form: '20-F',
      value: -19_426_051,
    });
  });

  it('rejects a file that is not companyfacts with a ParseError naming it', () => {
    expect(() => parseCompanyFacts(Buffer.from('{"a":1}'), 'x.json')).toThrow(ParseError);
  });
});

describe.skipIf(!HAS_SHARED)('parseEightK', () => {
  it('turns NVIDIA item 5.02 into a leadership-change item with its summary', () => {
    const k = parseEightK(read('filings/8-K/1045810/000104581026000024/nvda-20260302.htm'), 'nvda', {
      cik: 1045810,
      accession: '0001045810-26-000024',
    });
    expect(k.items.map((i) => i.item)).toEqual(['5.02', '9.01']);
    expect(k.items[0]).toMatchObject({ event_type: 'leadership_change' });
    expect(k.event_date).toBe('2026-03-02');
  });

  it('reads the SGML header of a complete submission: accession, ET acceptance time, filer', () => {
    const k = parseEightK(read('filings/full-submission/1045810/000104581026000024/0001045810-26-000024.txt'), 'nvda.txt');
    expect(k).toMatchObject({ cik: 1045810, accession: '0001045810-26-000024', filing_date: '2026-03-06', company_name: 'NVIDIA CORP' });
    expect(k.header?.acceptance_et).toBe('2026-03-06T16:11:25');
    expect(k.header?.acceptance_utc).toBe('2026-03-06T21:11:25Z');
  });

  it('maps pre-2004 item numbers (Apple 2004: Item 12 → 2.02, Item 7 → 9.01)', () => {
    const k = parseEightK(read('filings/8k-earnings/320193/000110465904019574/0001104659-04-019574.txt'), 'aapl-2004');
    expect(k.items.map((i) => [i.item, i.original_item])).toEqual([
      ['2.02', '12'],
      ['9.01', '7'],
    ]);
  });

  it('reads a Disney 2012 item 2.02 from an edgar-crawler document', () => {
    const k = parseEightK(read('filings/edgar-crawler-8k/1001039_8K_2012_0001193125-12-043763.htm'), 'dis', { cik: 1001039 });
    expect(k.items[0]).toMatchObject({ item: '2.02', event_type: 'financial_results' });
    expect(k.event_date).toBe('2012-02-07');
  });

  it('refuses a document that is not an 8-K', () => {
    expect(() => parseEightK(read('filings/10-K/crr-10k_20171231.htm'), 'crr')).toThrow(/not an 8-K/);
  });
});

describe('sgml times', () => {
  it('converts Eastern wall-clock to UTC across daylight saving', () => {
    expect(easternToUtc('2024-02-01T16:30:37')).toBe('2024-02-01T21:30:37Z');
    expect(easternToUtc('2024-07-01T16:30:37')).toBe('2024-07-01T20:30:37Z');
  });
  it('returns null for text without a SEC header', () => {
    expect(parseSgmlHeader('<html>hello</html>')).toBeNull();
  });
});

describe.skipIf(!HAS_SHARED)('parseEdgarIndex', () => {
  it('parses pipe-delimited master, fixed-width form and wrapped-header company files', () => {
    const m = parseEdgarIndex(read('index/daily/master.20200103.idx'), 'm');
    expect(m.kind).toBe('master');
    expect(m.rows[0]).toEqual({
      cik: 1000229,
      company_name: 'CORE LABORATORIES N V',
      form: '4',
      date_filed: '2020-01-03',
      file_name: 'edgar/data/1000229/0001209191-20-000788.txt',
      accession: '0001209191-20-000788',
    });
    const f = parseEdgarIndex(read('index/daily/form.20200318.idx'), 'f');
    expect(f.kind).toBe('form');
    expect(f.rows[2]).toMatchObject({ form: '1-A POS', cik: 1749817, date_filed: '2020-03-18' });
    const c = parseEdgarIndex(read('index/daily/company.20221003.idx'), 'c');
    expect(c.kind).toBe('company');
    expect(c.rejects).toEqual([]);
    expect(c.rows[0]).toMatchObject({ company_name: '1st stREIT Office Inc.', form: '1-A POS', cik: 1700461 });
  });

  it('reads quarterly YYYY-MM-DD dates under a longer header (1993)', () => {
    const q = parseEdgarIndex(read('index/quarterly-sample/master.1993QTR4.sample.idx'), 'q');
    expect(q.rows[1]).toMatchObject({ cik: 11860, form: '10-Q', date_filed: '1993-11-12' });
  });

  it('rejects the misaligned row of the malformed index with its line and reason', () => {
    const b = parseEdgarIndex(read('index/edge-cases/badform.idx.txt'), 'badform');
    expect(b.rows).toHaveLength(9);
    expect(b.rejects).toEqual([expect.objectContaining({ line: 17, reason: expect.stringContaining('not a number') })]);
  });

  it('throws a ParseError for the empty index (header, no rows)', () => {
    expect(() => parseEdgarIndex(read('index/edge-cases/empty-form.idx'), 'empty')).toThrow(/no rows/);
  });
});

describe.skipIf(!HAS_SHARED)('parseOwnership', () => {
  it('reads officer and director roles with titles (Tim Cook, Apple)', () => {
    const o = parseOwnership(read('ownership/320193/000032019319000090/wf-form4_156694501621463.xml'), 'cook');
    expect(o.roles.map((r) => [r.person_name, r.issuer_ticker, r.role_type, r.role])).toEqual([
      ['Timothy D Cook', 'AAPL', 'officer', 'Chief Executive Officer'],
      ['Timothy D Cook', 'AAPL', 'director', 'Director'],
    ]);
  });

  it('cuts the XML out of .txt and .pds.sgml wrappers and keeps the accession', () => {
    const t = parseOwnership(read('ownership/1750/000112760225001055/0001127602-25-001055.txt'), 'aar');
    expect(t).toMatchObject({ accession: '0001127602-25-001055', acceptance_et: '2025-01-10T16:07:30' });
    expect(t.roles[0]).toMatchObject({ person_name: 'Jessica A. Garascia', issuer_cik: 1750, role: 'Senior VP, GC, CAO & Secretary' });
    const s = parseOwnership(read('ownership/2488/000000248824000005/0000002488-24-000005.pds.sgml'), 'amd');
    expect(s.accession).toBe('0000002488-24-000005');
    expect(s.roles[0]).toMatchObject({ issuer_ticker: 'AMD', person_name: 'Darla M Smith' });
  });

  it('writes EDGAR LAST FIRST names first-name first and leaves entities alone', () => {
    expect(displayName('Maestri Luca')).toBe('Luca Maestri');
    expect(displayName('BERKSHIRE HATHAWAY INC')).toBe('BERKSHIRE HATHAWAY INC');
  });

  it('refuses a file without an ownership document', () => {
    expect(() => parseOwnership(read('ownership/feeds/1045810-browse-edgar-type4.atom.xml'), 'feed')).toThrow(ParseError);
  });
});

describe.skipIf(!HAS_SHARED)('parseTenK', () => {
  it('finds Apple employees (Item 1, Human Capital) and product headings', () => {
    const t = parseTenK(read('filings/10-K/aapl-10-k-2024-11-01.html'), 'aapl');
    expect(t.cik).toBe(320193);
    expect(t.employees?.value).toBe(164_000);
    expect(t.products.map((p) => p.value)).toEqual(['iPhone', 'Mac', 'iPad', 'Wearables, Home and Accessories']);
    expect([...t.sections.keys()]).toEqual(expect.arrayContaining(['1', '1A', '7', '7A', '8']));
  });

  it('reads the NVIDIA executive-officers table', () => {
    const t = parseTenK(read('filings/10-K/nvda-10-k-2025-02-26.html'), 'nvda');
    expect(t.executives[0]).toEqual({ name: 'Jen-Hsun Huang', age: 62, title: 'President and Chief Executive Officer' });
    expect(t.executives).toHaveLength(5);
    expect(t.employees?.value).toBe(36_000);
  });

  it('reads "headcount was" (Tesla) and a 1999 HTML 10-K', () => {
    expect(parseTenK(read('filings/10-K/tsla-10-k-2025-01-30.html'), 'tsla').employees?.value).toBe(125_665);
    expect(parseTenK(read('filings/10-K/0000950153-99-001234.html'), 'medicis').employees?.value).toBe(144);
  });
});

describe.skipIf(!HAS_SHARED)('classifyDocument and pathHints', () => {
  it('classifies by content and reads CIK/accession from EDGAR paths', () => {
    expect(classifyDocument(read('filings/10-K/nvda-10-k-2025-02-26.html').toString('utf8')).kind).toBe('10-K');
    expect(classifyDocument(read('filings/def14a/320193/000130817923000019/laap2023_def14a.htm.document.txt').toString('utf8'))).toEqual({
      kind: 'other',
      form: 'DEF 14A',
    });
    expect(pathHints('filings/8-K/1045810/000104581026000024/nvda-20260302.htm')).toMatchObject({
      cik: 1045810,
      accession: '0001045810-26-000024',
    });
    expect(pathHints('filings/edgar-crawler-8k/1001039_8K_2012_0001193125-12-043763.htm')).toMatchObject({
      cik: 1001039,
      accession: '0001193125-12-043763',
    });
    expect(pathHints('filings/10-K/aapl-10-k-2024-11-01.html')).toMatchObject({ cik: null, date: '2024-11-01' });
    expect(pathHints('filings/10-K/0000950153-99-001234.html')).toMatchObject({ accession: '0000950153-99-001234', date: null });
  });
});
