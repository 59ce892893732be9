-- Whether a ticker has stale split-adjusted days in [$from, $to] (quote_split_adjustments): the cheap check before
-- split-adjusted-days.sql, whose raw-bar window reads the ticker's whole raw series. Params: $ticker VARCHAR,
-- $from DATE, $to DATE. Columns: n (0 when none).
SELECT count(*) AS n
FROM quote_split_adjustments
WHERE ticker = $ticker AND status = 'stale' AND quote_date BETWEEN $from AND $to
