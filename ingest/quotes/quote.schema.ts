/**
 * End-of-day quote bars: the one row shape every quote format is mapped onto.
 * Prices are decimals with at most 6 fractional digits (stored DECIMAL(18,6));
 * volume and trade count are integers. Raw and split/dividend-adjusted prices
 * are different series and never mixed: `adjustment` is part of the key
 * (ticker, quote_date, adjustment) and of every response.
 */

/** Which price series a bar belongs to: as traded, or adjusted back for splits and dividends. */
export type Adjustment = 'raw' | 'split_dividend';

export interface QuoteBar {
  ticker: string;
  /** Trading day, YYYY-MM-DD (the exchange's calendar day, America/New_York). */
  quote_date: string;
  adjustment: Adjustment;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  vwap: number | null;
  trade_count: number | null;
}

/** Flags set by validation (jobs/quotes/derive-bars.sql). A flagged bar is kept and served, never dropped or fixed. */
export const QUOTE_FLAGS = {
  high_below_open_close: 'high < max(open, close)',
  low_above_open_close: 'low > min(open, close)',
  high_below_low: 'high < low',
  negative_volume: 'volume < 0',
  high_above_range: 'high more than 20% above max(open, close, vwap): an outlier print (e.g. NVDA 2024-06-10, high 195.85 vs close 121.73)',
  low_below_range: 'low more than 20% below min(open, close, vwap): an outlier print',
  vwap_outside_range: 'vwap outside [low, high]',
} as const;

/** Tickers as stored: upper case, share classes with '-' (BRK-B), at most 15 characters. */
export const TICKER_RE = /^[A-Z0-9][A-Z0-9.\-]{0,14}$/;

/** Normalises a vendor ticker (`brk.b`, `BRK/B`) to the stored form (`BRK-B`). */
export function normalizeTicker(raw: string): string {
  return raw.trim().toUpperCase().replace(/[./]/g, '-');
}
