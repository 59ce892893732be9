-- Stage 3: the served table quote_bars (parquet-only: the derive passes this query to replaceParquetTable, which
-- writes it in this order). Params: none. Reads quote_chain_input and quote_leaf_hashes (written by the JS fold in
-- the same row order: POSITIONAL JOIN). Flags (README "Quotes and transcripts"): a flagged bar is kept as is; the
-- FLAGS placeholder below is replaced by FLAGS_SQL (jobs/quotes/quotes-fold.ts), the one list both paths use.
-- Columns: exactly quote_bars' (tables.sql), sorted by (ticker, adjustment, quote_date).
SELECT c.ticker, c.adjustment, c.quote_date, c.open, c.high, c.low, c.close, c.volume, c.vwap, c.trade_count,
  /*FLAGS*/NULL AS flags,
  c.dataset, c.content_sha256, c.day_index, h.leaf_hash, ('0x' || substr(h.leaf_hash, 1, 15))::BIGINT AS leaf_key
FROM quote_chain_input c POSITIONAL JOIN quote_leaf_hashes h
WHERE c.is_current
ORDER BY c.ticker, c.adjustment, c.quote_date
