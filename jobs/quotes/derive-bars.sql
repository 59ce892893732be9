-- Stage 3: the served table. Params: none. Reads quote_chain_input and quote_leaf_hashes (written by the JS fold in
-- the same row order: POSITIONAL JOIN). Flags (README "Quotes and transcripts"): a flagged bar is kept as is; the
-- FLAGS placeholder below is replaced by FLAGS_SQL (jobs/quotes/quotes-fold.ts), the one list both paths use.
DELETE FROM quote_bars;
INSERT INTO quote_bars
SELECT c.ticker, c.adjustment, c.quote_date, c.open, c.high, c.low, c.close, c.volume, c.vwap, c.trade_count,
  /*FLAGS*/NULL AS flags,
  c.dataset, c.content_sha256, c.day_index, h.leaf_hash, ('0x' || substr(h.leaf_hash, 1, 15))::BIGINT AS leaf_key
FROM quote_chain_input c POSITIONAL JOIN quote_leaf_hashes h
WHERE c.is_current;
DELETE FROM quote_leaf_keys;
INSERT INTO quote_leaf_keys SELECT leaf_key, ticker, adjustment, quote_date FROM quote_bars ORDER BY leaf_key;
