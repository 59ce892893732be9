-- A superseded quote leaf (fork) by hash. Params: $leaf_hash VARCHAR. Columns: quote_leaf_history's.
SELECT ticker, adjustment, quote_date, open, high, low, close, volume, vwap, trade_count, dataset, content_sha256,
       leaf_hash, parent, superseded_by, reason, fork_date, recorded_run_id
FROM quote_leaf_history WHERE leaf_hash = $leaf_hash
LIMIT 1
