/**
 * Sample quote files in the real formats (ingest/quotes/formats.ts) for the
 * sample universe, deterministic in (scale, seed):
 *
 *   quotes/alpaca-sdk/bars-raw-NNN.csv        raw daily bars (Alpaca SDK export layout), 100 tickers per file
 *   quotes/alpaca-daily/bars-adjusted-NNN.csv split+dividend adjusted bars (Alpaca daily layout)
 *
 * Prices follow a seeded random walk; about 5% of companies had a 4:1 split
 * half-way (adjusted history divides earlier prices by 4, raw does not), and
 * NVDA carries a bad print like the real 2024-06-10 bar (high far above the
 * close) that validation must flag and keep.
 */
import {
  Rng,
  SAMPLE_TODAY,
  addDays,
  type SampleFile,
  type SampleGenerator,
  type SampleOptions,
  type SampleScale,
} from '../sample/sample-kit.ts';
import { sampleUniverse, type SampleCompany } from '../sample/universe.ts';

export const QUOTE_DAYS: Record<SampleScale, number> = { small: 250, medium: 750, full: 2520 };
const PER_FILE = 100;

/** The last `n` weekdays up to SAMPLE_TODAY, oldest first. */
export function sampleTradingDays(n: number): string[] {
  const out: string[] = [];
  for (let d = SAMPLE_TODAY; out.length < n; d = addDays(d, -1)) {
    const wd = new Date(`${d}T00:00:00Z`).getUTCDay();
    if (wd !== 0 && wd !== 6) out.push(d);
  }
  return out.reverse();
}

interface Bar {
  date: string;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
  vw: number;
  n: number;
}

/** Raw bars of one company plus its split day (index) or -1. */
export function sampleBars(c: SampleCompany, days: string[], seed: number): { bars: Bar[]; splitAt: number } {
  const rng = new Rng(seed).fork(`quotes:${c.ticker}`);
  const splitAt = rng.bool(0.05) ? Math.floor(days.length / 2) : -1;
  let price = 5 + rng.next() * 300;
  const bars: Bar[] = [];
  days.forEach((date, i) => {
    if (i === splitAt) price /= 4;
    const open = price * (1 + rng.normal(0, 0.004));
    const close = Math.max(0.5, open * (1 + rng.normal(0.0003, 0.015)));
    const high = Math.max(open, close) * (1 + Math.abs(rng.normal(0, 0.006)));
    const low = Math.min(open, close) * (1 - Math.abs(rng.normal(0, 0.006)));
    const vw = (open + close + high + low) / 4;
    const v = Math.round(Math.exp(rng.normal(14, 1)));
    bars.push({
      date,
      o: r2(open),
      h: r2(high),
      l: r2(low),
      c: r2(close),
      v,
      vw: Math.round(vw * 1e6) / 1e6,
      n: Math.max(1, Math.round(v / 120)),
    });
    price = close;
  });
  if (c.ticker === 'NVDA' && bars.length > 20) {
    const b = bars[bars.length - 20];
    b.h = r2(b.c * 1.6); // a bad print, as in the real NVDA 2024-06-10 bar
  }
  return { bars, splitAt };
}

function r2(x: number): number {
  return Math.round(x * 100) / 100;
}

function* rawCsv(group: SampleCompany[], days: string[], seed: number): Iterable<string> {
  yield 'timestamp,symbol,open,high,low,close,volume,vwap,trade_count\n';
  for (const c of group) {
    let chunk = '';
    for (const b of sampleBars(c, days, seed).bars)
      chunk += `${b.date} 05:00:00+00:00,${c.ticker},${b.o},${b.h},${b.l},${b.c},${b.v}.0,${b.vw},${b.n}.0\n`;
    yield chunk;
  }
}

function* adjustedCsv(group: SampleCompany[], days: string[], seed: number): Iterable<string> {
  yield 'Date,symbol,Open,High,Low,Close,Volume,Trades,VWAP\n';
  for (const c of group) {
    const { bars, splitAt } = sampleBars(c, days, seed);
    let chunk = '';
    bars.forEach((b, i) => {
      // Adjusted history: prices before the split divided by 4 (volume times 4); a 0.2% dividend factor on all earlier days.
      const f = (splitAt >= 0 && i < splitAt ? 0.25 : 1) * (i < bars.length - 1 ? 0.998 : 1);
      const vf = splitAt >= 0 && i < splitAt ? 4 : 1;
      chunk += `${b.date} 05:00:00+00:00,${c.ticker},${r2(b.o * f)},${r2(b.h * f)},${r2(b.l * f)},${r2(b.c * f)},${b.v * vf}.0,${b.n}.0,${Math.round(b.vw * f * 1e6) / 1e6}\n`;
    });
    yield chunk;
  }
}

export const quotesSampleGenerator: SampleGenerator = {
  name: 'quotes',
  *generate({ scale, seed }: SampleOptions): Iterable<SampleFile> {
    const companies = sampleUniverse(scale, seed).filter((c) => c.active);
    const days = sampleTradingDays(QUOTE_DAYS[scale]);
    for (let i = 0; i * PER_FILE < companies.length; i++) {
      const group = companies.slice(i * PER_FILE, (i + 1) * PER_FILE);
      const n = String(i).padStart(3, '0');
      yield { path: `quotes/alpaca-sdk/bars-raw-${n}.csv`, content: rawCsv(group, days, seed) };
      // Adjusted series for the first files only at full scale (keeps the full sample near 20M raw rows).
      if (scale !== 'full' || i < 10) yield { path: `quotes/alpaca-daily/bars-adjusted-${n}.csv`, content: adjustedCsv(group, days, seed) };
    }
  },
};
