-- Stage 1 of the quotes derive: canonical record, record hash, duplicate and version ranking of every input bar.
-- Params: none. Reads quote_bar_inputs. Creates TEMP TABLE quote_versions with columns of quote_bar_inputs plus
--   record_sha256  SHA-256 of the RFC 8785 record {adjustment, close, high, low, open, quote_date, ticker, trade_count, volume, vwap}
--                  (keys sorted; DECIMAL text with trailing zeros removed = the ECMAScript shortest form of these numbers)
--   dup_rank       >1: the same record already came from an earlier source/line (a duplicate → rejects)
-- Record text must equal hashCanonical(quoteRecord(bar)) in ingest/quotes/chain.ts (pinned by test/quotes/pipeline.test.ts).
CREATE OR REPLACE TEMP TABLE quote_versions AS
WITH canon AS (
  SELECT *,
    '{"adjustment":"' || adjustment
    || '","close":' || rtrim(rtrim(CAST(close AS VARCHAR), '0'), '.')
    || ',"high":' || rtrim(rtrim(CAST(high AS VARCHAR), '0'), '.')
    || ',"low":' || rtrim(rtrim(CAST(low AS VARCHAR), '0'), '.')
    || ',"open":' || rtrim(rtrim(CAST(open AS VARCHAR), '0'), '.')
    || ',"quote_date":"' || CAST(quote_date AS VARCHAR)
    || '","ticker":"' || ticker
    || '","trade_count":' || coalesce(CAST(trade_count AS VARCHAR), 'null')
    || ',"volume":' || CAST(volume AS VARCHAR)
    || ',"vwap":' || coalesce(rtrim(rtrim(CAST(vwap AS VARCHAR), '0'), '.'), 'null')
    || '}' AS record_json
  FROM quote_bar_inputs
)
SELECT * EXCLUDE (record_json), sha256(record_json) AS record_sha256,
  row_number() OVER (PARTITION BY ticker, adjustment, quote_date, sha256(record_json) ORDER BY source_order, file, line) AS dup_rank
FROM canon;
