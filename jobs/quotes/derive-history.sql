-- Stage 4: forks into quote_leaf_history (cumulative; rows carried from the previous snapshot are already loaded).
-- Params: $run_id VARCHAR. Reads quote_chain_input POSITIONAL JOIN quote_leaf_hashes (superseded versions of this run), quote_bars, and
-- TEMP VIEW previous_quote_bars (the previous snapshot's quote_bars, or an empty view) with the sources table, and TEMP VIEW
-- current_quote_bars (quote_bars). On an incremental run both views hold only the chains with a bar of a file not reused
-- (jobs/quotes/quotes.pipeline.ts changedChainsScope): the other chains are the same rows with the same leaves.
INSERT INTO quote_leaf_history
SELECT c.ticker, c.adjustment, c.quote_date, c.open, c.high, c.low, c.close, c.volume, c.vwap, c.trade_count,
  c.dataset, c.content_sha256, h.leaf_hash, h.parent, cur.leaf_hash, 'superseded_in_input', c.quote_date, $run_id
FROM quote_chain_input c POSITIONAL JOIN quote_leaf_hashes h
LEFT JOIN quote_bars cur ON cur.ticker = c.ticker AND cur.adjustment = c.adjustment AND cur.quote_date = c.quote_date
WHERE NOT c.is_current AND h.leaf_hash NOT IN (SELECT leaf_hash FROM quote_leaf_history);
-- next statement

INSERT INTO quote_leaf_history
WITH prev AS (
  SELECT p.*,
    coalesce(lag(p.leaf_hash) OVER (PARTITION BY p.ticker, p.adjustment ORDER BY p.quote_date),
             (SELECT arg_min(s.leaf_hash, (s.retrieved_at, s.source_url, s.leaf_hash)) FROM sources s WHERE s.content_sha256 = p.content_sha256 AND s.dataset = p.dataset)) AS parent
  FROM previous_quote_bars p
), gone AS (
  SELECT prev.* FROM prev ANTI JOIN current_quote_bars q ON q.leaf_key = prev.leaf_key AND q.leaf_hash = prev.leaf_hash
)
SELECT g.ticker, g.adjustment, g.quote_date, g.open, g.high, g.low, g.close, g.volume, g.vwap, g.trade_count,
  g.dataset, g.content_sha256, g.leaf_hash, g.parent, cur.leaf_hash,
  CASE WHEN cur.leaf_hash IS NULL THEN 'removed'
       WHEN (cur.open, cur.high, cur.low, cur.close, cur.volume, cur.vwap, cur.trade_count)
            IS NOT DISTINCT FROM (g.open, g.high, g.low, g.close, g.volume, g.vwap, g.trade_count) THEN 'rechained'
       ELSE 'corrected' END,
  min(g.quote_date) OVER (PARTITION BY g.ticker, g.adjustment),
  $run_id
FROM gone g
LEFT JOIN current_quote_bars cur ON cur.ticker = g.ticker AND cur.adjustment = g.adjustment AND cur.quote_date = g.quote_date
WHERE g.leaf_hash NOT IN (SELECT leaf_hash FROM quote_leaf_history);
