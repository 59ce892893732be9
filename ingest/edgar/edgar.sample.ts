/**
 * Sample EDGAR files in the real formats: `company_tickers_exchange.json`,
 * `company_tickers.json`, a dated earlier ticker snapshot (so delisted and
 * acquired companies can be told apart), and `CIK##########.json` submissions
 * with `filings.recent` as parallel column arrays. Layout mirrors EDGAR's:
 *
 *   sec/tickers/company_tickers_exchange.json
 *   sec/tickers/company_tickers_exchange.2023-05.json
 *   sec/tickers/company_tickers.json
 *   sec/submissions/CIK##########.json
 *
 * plus the layer files of edgar-layers.sample.ts (companyfacts, 10-K and 8-K
 * documents, Forms 3/4, daily index files).
 */
import { addDays, Rng, SAMPLE_TODAY, type SampleFile, type SampleGenerator, type SampleOptions } from '../sample/sample-kit.ts';
import { sampleUniverse, type SampleCompany } from '../sample/universe.ts';
import { padCik } from './cik.ts';
import { edgarLayerFiles, type SampleFiling } from './edgar-layers.sample.ts';

export type { SampleFiling };

/** Agents that file on behalf of companies (accession prefixes). */
const AGENTS = [1193125, 1628280, 950170, 1104659];

/** The filings of one sample company, newest first, deterministic in (seed, cik). */
export function sampleFilings(c: SampleCompany, seed: number): SampleFiling[] {
  const rng = new Rng(seed).fork(`filings:${c.cik}`);
  const out: SampleFiling[] = [];
  let seq = 1;
  const endDate = c.active ? SAMPLE_TODAY : '2025-06-30';
  const acc = (date: string) => {
    const agent = rng.bool(0.5) ? c.cik : rng.pick(AGENTS);
    return `${String(agent).padStart(10, '0')}-${date.slice(2, 4)}-${String(seq++ + rng.int(0, 50) * 1000).padStart(6, '0')}`;
  };
  const push = (form: string, reportDate: string, lagDays: number, items = '', desc = form) => {
    const filingDate = addDays(reportDate, lagDays);
    if (filingDate > endDate) return;
    // Results go out before the open or after the close; labels are Eastern wall-clock marked Z, as in Apple's recordings.
    const hour = form === '8-K' && items.includes('2.02') ? rng.pick([7, 8, 16]) : rng.int(9, 16);
    const accession = acc(filingDate);
    out.push({
      accessionNumber: accession,
      filingDate,
      reportDate,
      // EDGAR labels acceptance times with Z although many are Eastern wall-clock (see shared notes).
      acceptanceDateTime: `${filingDate}T${String(hour).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}.000Z`,
      form,
      items,
      primaryDocument: `${c.ticker.toLowerCase().replace(/[^a-z]/g, '')}-${filingDate.replace(/-/g, '')}.htm`,
      primaryDocDescription: desc,
      size: rng.int(20_000, 9_000_000),
    });
  };
  const fyMonth = Number(c.fiscal_year_end.slice(0, 2));
  const fyDay = Math.min(28, Number(c.fiscal_year_end.slice(2, 4)));
  for (let year = 2022; year <= 2026; year++) {
    const fyEnd = `${year}-${String(fyMonth).padStart(2, '0')}-${String(fyDay).padStart(2, '0')}`;
    push('10-K', fyEnd, rng.int(55, 75), '', '10-K');
    for (let q = 1; q <= 3; q++) {
      const qEnd = addDays(fyEnd, q * 91);
      push('10-Q', qEnd, rng.int(35, 45), '', '10-Q');
    }
    for (let q = 0; q < 4; q++) {
      const qEnd = addDays(fyEnd, q * 91);
      push('8-K', addDays(qEnd, rng.int(25, 32)), 0, '2.02,9.01', '8-K');
    }
    if (rng.bool(0.35)) push('8-K', addDays(fyEnd, rng.int(1, 300)), rng.int(0, 3), '5.02', '8-K');
    if (rng.bool(0.15)) push('8-K', addDays(fyEnd, rng.int(1, 300)), rng.int(0, 3), '2.01,9.01', '8-K');
    if (rng.bool(0.2)) push('8-K', addDays(fyEnd, rng.int(1, 300)), rng.int(0, 3), '7.01,8.01', '8-K');
    if (rng.bool(0.08)) push('8-K', addDays(fyEnd, rng.int(1, 300)), rng.int(0, 3), '2.05', '8-K');
  }
  if (!c.active && c.end_reason === 'acquired') push('8-K', '2025-06-20', 1, '2.01,3.01,5.01,9.01', '8-K');
  if (!c.active) push('25-NSE', '2025-06-25', 0, '', '25-NSE');
  return out.sort((a, b) => (a.filingDate < b.filingDate ? 1 : a.filingDate > b.filingDate ? -1 : 0));
}

function submissionsJson(c: SampleCompany, seed: number): string {
  const f = sampleFilings(c, seed);
  const col = <K extends keyof SampleFiling>(k: K) => f.map((x) => x[k]);
  const address = {
    street1: `${100 + (c.cik % 900)} MAIN STREET`,
    street2: null,
    city: c.city,
    stateOrCountry: c.state,
    zipCode: String(10000 + (c.cik % 89999)),
    stateOrCountryDescription: c.state,
    isForeignLocation: 0,
    foreignStateTerritory: null,
    country: null,
    countryCode: null,
  };
  const tickers = c.active ? [c.ticker, ...c.extra_tickers] : [];
  // Key order and value shapes follow the real data.sec.gov response.
  return JSON.stringify({
    cik: padCik(c.cik),
    entityType: 'operating',
    sic: c.sic,
    sicDescription: c.sic_description,
    ownerOrg: null,
    insiderTransactionForOwnerExists: 0,
    insiderTransactionForIssuerExists: 1,
    name: c.name,
    tickers,
    exchanges: tickers.map(() => c.exchange),
    ein: String(100000000 + (c.cik % 899999999)),
    lei: null,
    description: '',
    website: '',
    investorWebsite: '',
    category: c.category,
    fiscalYearEnd: c.fiscal_year_end,
    stateOfIncorporation: c.state_of_incorporation,
    stateOfIncorporationDescription: c.state_of_incorporation,
    addresses: { mailing: address, business: address },
    phone: `(555) ${String(100 + (c.cik % 900))}-${String(1000 + (c.cik % 9000))}`,
    flags: '',
    formerNames: [],
    filings: {
      recent: {
        accessionNumber: col('accessionNumber'),
        filingDate: col('filingDate'),
        reportDate: col('reportDate'),
        acceptanceDateTime: col('acceptanceDateTime'),
        act: f.map((x) => (x.form.startsWith('25') ? '' : '34')),
        form: col('form'),
        fileNumber: f.map(() => `001-${String(10000 + (c.cik % 89999))}`),
        filmNumber: f.map((_, i) => String(24000000 + i)),
        items: col('items'),
        core_type: col('form'),
        size: col('size'),
        isXBRL: f.map((x) => (x.form === '8-K' ? 0 : 1)),
        isInlineXBRL: f.map((x) => (x.form === '8-K' ? 0 : 1)),
        primaryDocument: col('primaryDocument'),
        primaryDocDescription: col('primaryDocDescription'),
      },
      files: [],
    },
  });
}

export const edgarSampleGenerator: SampleGenerator = {
  name: 'edgar',
  *generate({ scale, seed }: SampleOptions): Iterable<SampleFile> {
    const companies = sampleUniverse(scale, seed);
    const listed = companies.filter((c) => c.active);
    const rows = listed.flatMap((c) => [c.ticker, ...c.extra_tickers].map((t) => [c.cik, c.name, t, c.exchange]));
    yield {
      path: 'sec/tickers/company_tickers_exchange.json',
      content: JSON.stringify({ fields: ['cik', 'name', 'ticker', 'exchange'], data: rows }),
    };
    const old = companies.map((c) => [c.cik, c.name, c.ticker, c.exchange]);
    yield {
      path: 'sec/tickers/company_tickers_exchange.2023-05.json',
      content: JSON.stringify({ fields: ['cik', 'name', 'ticker', 'exchange'], data: old }),
    };
    const plain = Object.fromEntries(rows.map((r, i) => [String(i), { cik_str: r[0], ticker: r[2], title: r[1] }]));
    yield { path: 'sec/tickers/company_tickers.json', content: JSON.stringify(plain) };
    for (const c of companies) yield { path: `sec/submissions/CIK${padCik(c.cik)}.json`, content: submissionsJson(c, seed) };
    // Layers: companyfacts, 10-K/8-K documents, Forms 3/4, daily index files (edgar-layers.sample.ts).
    yield* edgarLayerFiles(companies, seed, (c) => sampleFilings(c, seed));
  },
};
