-- Stage 3: the served table. Params: none. Reads quote_chain_input and quote_leaf_hashes (written by the JS fold in
-- the same row order: POSITIONAL JOIN). Flags (README "Quotes and transcripts"): a flagged bar is kept as is.
DELETE FROM quote_bars;
INSERT INTO quote_bars
SELECT c.ticker, c.adjustment, c.quote_date, c.open, c.high, c.low, c.close, c.volume, c.vwap, c.trade_count,
  list_filter([
    CASE WHEN c.high < greatest(c.open, c.close) THEN 'high_below_open_close' END,
    CASE WHEN c.low > least(c.open, c.close) THEN 'low_above_open_close' END,
    CASE WHEN c.high < c.low THEN 'high_below_low' END,
    CASE WHEN c.volume < 0 THEN 'negative_volume' END,
    CASE WHEN c.high > 1.2 * greatest(c.open, c.close, coalesce(c.vwap, c.close)) THEN 'high_above_range' END,
    CASE WHEN c.low * 1.2 < least(c.open, c.close, coalesce(c.vwap, c.close)) THEN 'low_below_range' END,
    CASE WHEN c.vwap IS NOT NULL AND (c.vwap > c.high OR c.vwap < c.low) THEN 'vwap_outside_range' END
  ], x -> x IS NOT NULL) AS flags,
  c.dataset, c.content_sha256, c.day_index, h.leaf_hash, ('0x' || substr(h.leaf_hash, 1, 15))::BIGINT AS leaf_key
FROM quote_chain_input c POSITIONAL JOIN quote_leaf_hashes h
WHERE c.is_current;
DELETE FROM quote_leaf_keys;
INSERT INTO quote_leaf_keys SELECT leaf_key, ticker, adjustment, quote_date FROM quote_bars ORDER BY leaf_key;
