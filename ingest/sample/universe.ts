/**
 * The sample world's companies, shared by every generator (EDGAR, quotes,
 * transcripts), so tickers and CIKs join across domains exactly as real data
 * does. Deterministic in (scale, seed). A handful of well-known companies come
 * first so README examples (`/api/company/AAPL`) work at every scale.
 */
import { Rng, type SampleScale } from './sample-kit.ts';

export interface SampleCompany {
  cik: number;
  ticker: string;
  /** Extra share classes / preferreds (`BRK-B`, `TWO-PA`). */
  extra_tickers: string[];
  name: string;
  exchange: 'Nasdaq' | 'NYSE' | 'OTC' | 'CBOE' | null;
  sic: string;
  sic_description: string;
  state_of_incorporation: string;
  city: string;
  state: string;
  fiscal_year_end: string;
  category: string;
  employees: number;
  shares_outstanding: number;
  /** Listed in the latest ticker file; false for companies taken private or delisted. */
  active: boolean;
  /** How it stopped being listed, when not active. */
  end_reason: 'acquired' | 'delisted' | null;
  /** Sector keyword used by document generators (ai, semis, retail, ...). */
  theme: string;
  ipo_year: number;
}

export const COMPANY_COUNT: Record<SampleScale, number> = { small: 300, medium: 2000, full: 8200 };

const SIC: Array<[string, string, string]> = [
  ['3571', 'Electronic Computers', 'hardware'],
  ['3674', 'Semiconductors & Related Devices', 'semis'],
  ['7372', 'Services-Prepackaged Software', 'software'],
  ['7370', 'Services-Computer Programming, Data Processing, Etc.', 'ai'],
  ['2834', 'Pharmaceutical Preparations', 'pharma'],
  ['6022', 'State Commercial Banks', 'bank'],
  ['5331', 'Retail-Variety Stores', 'retail'],
  ['4911', 'Electric Services', 'utility'],
  ['1311', 'Crude Petroleum & Natural Gas', 'energy'],
  ['3711', 'Motor Vehicles & Passenger Car Bodies', 'auto'],
  ['4213', 'Trucking (No Local)', 'freight'],
  ['6770', 'Blank Checks', 'spac'],
];
const FAMOUS: Array<Partial<SampleCompany> & { cik: number; ticker: string; name: string }> = [
  {
    cik: 320193,
    ticker: 'AAPL',
    name: 'Apple Inc.',
    exchange: 'Nasdaq',
    sic: '3571',
    state_of_incorporation: 'CA',
    city: 'CUPERTINO',
    state: 'CA',
    fiscal_year_end: '0926',
    theme: 'hardware',
    employees: 164000,
    shares_outstanding: 14_840_390_000,
  },
  {
    cik: 1045810,
    ticker: 'NVDA',
    name: 'NVIDIA CORP',
    exchange: 'Nasdaq',
    sic: '3674',
    state_of_incorporation: 'DE',
    city: 'SANTA CLARA',
    state: 'CA',
    fiscal_year_end: '0126',
    theme: 'ai',
    employees: 36000,
    shares_outstanding: 24_300_000_000,
  },
  {
    cik: 789019,
    ticker: 'MSFT',
    name: 'MICROSOFT CORP',
    exchange: 'Nasdaq',
    sic: '7372',
    state_of_incorporation: 'WA',
    city: 'REDMOND',
    state: 'WA',
    fiscal_year_end: '0630',
    theme: 'software',
    employees: 228000,
    shares_outstanding: 7_430_000_000,
  },
  {
    cik: 1318605,
    ticker: 'TSLA',
    name: 'Tesla, Inc.',
    exchange: 'Nasdaq',
    sic: '3711',
    state_of_incorporation: 'TX',
    city: 'AUSTIN',
    state: 'TX',
    fiscal_year_end: '1231',
    theme: 'auto',
    employees: 125000,
    shares_outstanding: 3_220_000_000,
  },
  {
    cik: 1652044,
    ticker: 'GOOGL',
    extra_tickers: ['GOOG'],
    name: 'Alphabet Inc.',
    exchange: 'Nasdaq',
    sic: '7370',
    state_of_incorporation: 'DE',
    city: 'MOUNTAIN VIEW',
    state: 'CA',
    fiscal_year_end: '1231',
    theme: 'ai',
    employees: 183000,
    shares_outstanding: 12_100_000_000,
  },
  {
    cik: 310522,
    ticker: 'FNMA',
    extra_tickers: ['FNMAS', 'FNMAJ', 'FNMAH'],
    name: 'FEDERAL NATIONAL MORTGAGE ASSOCIATION FANNIE MAE',
    exchange: 'OTC',
    sic: '6111',
    state_of_incorporation: '',
    city: 'WASHINGTON',
    state: 'DC',
    fiscal_year_end: '1231',
    theme: 'bank',
    employees: 8000,
    shares_outstanding: 1_158_000_000,
  },
  {
    cik: 72333,
    ticker: 'JWN',
    name: 'NORDSTROM, INC.',
    exchange: 'NYSE',
    sic: '5651',
    state_of_incorporation: 'WA',
    city: 'SEATTLE',
    state: 'WA',
    fiscal_year_end: '0131',
    theme: 'retail',
    employees: 54000,
    shares_outstanding: 164_000_000,
    active: false,
    end_reason: 'acquired',
  },
];

const WORDS_A = [
  'Apex',
  'Blue',
  'Cedar',
  'Delta',
  'Ember',
  'Falcon',
  'Granite',
  'Harbor',
  'Iron',
  'Juniper',
  'Keystone',
  'Lumen',
  'Meridian',
  'North',
  'Orion',
  'Pioneer',
  'Quarry',
  'Redwood',
  'Summit',
  'Tidal',
  'Union',
  'Vertex',
  'Willow',
  'Zenith',
];
const WORDS_B = [
  'Systems',
  'Holdings',
  'Technologies',
  'Therapeutics',
  'Energy',
  'Logistics',
  'Bancorp',
  'Networks',
  'Dynamics',
  'Labs',
  'Industries',
  'Materials',
  'Robotics',
  'Semiconductor',
  'Capital',
];
const CITIES: Array<[string, string]> = [
  ['NEW YORK', 'NY'],
  ['SAN JOSE', 'CA'],
  ['AUSTIN', 'TX'],
  ['CHICAGO', 'IL'],
  ['BOSTON', 'MA'],
  ['SEATTLE', 'WA'],
  ['DENVER', 'CO'],
  ['ATLANTA', 'GA'],
  ['MIAMI', 'FL'],
  ['PHOENIX', 'AZ'],
];

/** The companies of the sample world, famous ones first. */
export function sampleUniverse(scale: SampleScale, seed: number): SampleCompany[] {
  const rng = new Rng(seed).fork('universe');
  const n = COMPANY_COUNT[scale];
  const out: SampleCompany[] = [];
  const usedTickers = new Set<string>();
  const usedCiks = new Set<number>();
  for (const f of FAMOUS) {
    const sic = SIC.find((s) => s[0] === f.sic) ?? ['6111', 'Federal & Federally-Sponsored Credit Agencies', 'bank'];
    out.push({
      extra_tickers: [],
      exchange: 'Nasdaq',
      sic: sic[0],
      sic_description: sic[1],
      state_of_incorporation: 'DE',
      city: 'NEW YORK',
      state: 'NY',
      fiscal_year_end: '1231',
      category: 'Large accelerated filer',
      employees: 10000,
      shares_outstanding: 1e9,
      active: true,
      end_reason: null,
      theme: sic[2],
      ipo_year: 1990,
      ...f,
    } as SampleCompany);
    usedTickers.add(f.ticker);
    usedCiks.add(f.cik);
  }
  while (out.length < n) {
    const i = out.length;
    const [sic, sicDesc, theme] = rng.pick(SIC);
    const name = `${rng.pick(WORDS_A)} ${rng.pick(WORDS_B)}${rng.bool(0.3) ? ' Corp' : ' Inc.'}`;
    let ticker = '';
    do {
      const len = rng.int(2, 4);
      ticker = Array.from({ length: len }, () => String.fromCharCode(65 + rng.int(0, 25))).join('');
    } while (usedTickers.has(ticker));
    usedTickers.add(ticker);
    let cik = 0;
    do cik = rng.int(1_000_000, 2_099_999);
    while (usedCiks.has(cik));
    usedCiks.add(cik);
    const [city, state] = rng.pick(CITIES);
    const inactive = rng.bool(0.04);
    const extra = rng.bool(0.03) ? [`${ticker}-PA`] : [];
    out.push({
      cik,
      ticker,
      extra_tickers: extra,
      name: `${name}${usedName(out, name) ? ` ${i}` : ''}`,
      exchange: rng.weighted([
        ['Nasdaq', 50],
        ['NYSE', 40],
        ['OTC', 8],
        [null, 2],
      ] as const),
      sic,
      sic_description: sicDesc,
      state_of_incorporation: rng.weighted([
        ['DE', 70],
        ['NV', 10],
        ['E9', 5],
        ['D0', 3],
        [state, 12],
      ] as const),
      city,
      state,
      fiscal_year_end: rng.weighted([
        ['1231', 70],
        ['0630', 10],
        ['0930', 10],
        ['0331', 10],
      ] as const),
      category: rng.weighted([
        ['Large accelerated filer', 30],
        ['Accelerated filer', 20],
        ['Non-accelerated filer', 50],
      ] as const),
      employees: Math.round(Math.exp(rng.normal(7.5, 1.6))),
      shares_outstanding: Math.round(Math.exp(rng.normal(18.5, 1.3))),
      active: !inactive,
      end_reason: inactive ? (rng.bool(0.6) ? 'acquired' : 'delisted') : null,
      theme,
      ipo_year: rng.int(1970, 2024),
    });
  }
  return out;
}

function usedName(list: SampleCompany[], name: string): boolean {
  return list.some((c) => c.name === name);
}
