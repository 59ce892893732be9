-- Splits applied to the bars at publish (issue 18, item 4): see quote_split_adjustments in tables.sql.
-- Params: none. Reads quote_bars (a view over its parquet files), quote_corporate_actions. Replaces
-- quote_split_adjustments. A split read from several files (a day's fetch and a bulk listing) counts once.
-- served_leaf_hash is filled afterwards in JS (jobs/quotes/quotes.pipeline.ts fillServedLeafHashes) from
-- derive-served-leaves.sql.
DELETE FROM quote_split_adjustments;
INSERT INTO quote_split_adjustments
WITH splits AS (
  SELECT ticker, ex_date, split_from, split_to, min(origin_leaf_hash) AS origin_leaf_hash
  FROM quote_corporate_actions
  WHERE action = 'split' AND split_from > 0 AND split_to > 0
  GROUP BY ticker, ex_date, split_from, split_to
),
raw AS (
  SELECT ticker, quote_date, open, high, low, close, volume, leaf_hash
  FROM quote_bars
  WHERE adjustment = 'raw' AND ticker IN (SELECT ticker FROM splits)
),
factored AS (
  SELECT r.ticker, r.quote_date, any_value(r.open) AS open, any_value(r.high) AS high, any_value(r.low) AS low,
         any_value(r.close) AS close, any_value(r.volume) AS volume, any_value(r.leaf_hash) AS leaf_hash,
         product(s.split_to / s.split_from) AS factor, count(*) AS n,
         list(s.origin_leaf_hash ORDER BY s.ex_date, s.origin_leaf_hash) AS split_leaves
  FROM raw r JOIN splits s ON s.ticker = r.ticker AND s.ex_date > r.quote_date
  GROUP BY r.ticker, r.quote_date
),
adjusted AS (
  SELECT f.*,
         CAST(round(CAST(f.open AS DOUBLE) / f.factor, 6) AS DECIMAL(18,6)) AS a_open,
         CAST(round(CAST(f.high AS DOUBLE) / f.factor, 6) AS DECIMAL(18,6)) AS a_high,
         CAST(round(CAST(f.low AS DOUBLE) / f.factor, 6) AS DECIMAL(18,6)) AS a_low,
         CAST(round(CAST(f.close AS DOUBLE) / f.factor, 6) AS DECIMAL(18,6)) AS a_close
  FROM factored f
)
SELECT a.ticker, a.quote_date, a.factor, a.n, a.close, a.a_open, a.a_high, a.a_low, a.a_close,
       CAST(round(a.volume * a.factor) AS BIGINT),
       s.close,
       CASE WHEN s.close IS NULL THEN 'derived'
            WHEN abs(CAST(s.close AS DOUBLE) - CAST(a.a_close AS DOUBLE)) <= greatest(0.0001, 0.005 * CAST(a.a_close AS DOUBLE)) THEN 'agrees'
            ELSE 'stale' END,
       a.leaf_hash, s.leaf_hash, a.split_leaves, NULL
FROM adjusted a
LEFT JOIN quote_bars s ON s.ticker = a.ticker AND s.quote_date = a.quote_date AND s.adjustment = 'split_dividend';
