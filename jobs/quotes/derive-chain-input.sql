-- Stage 1 of the quotes derive: the ordered fold input, one row per distinct version of a day's bar.
-- Params: none. Reads quote_bar_inputs. Creates TEMP TABLE quote_chain_input (physically in fold order, so the fold
-- streams it in scan order) with the columns of quote_bar_inputs plus
--   record_sha256  SHA-256 of the RFC 8785 record {adjustment, close, high, low, open, quote_date, ticker, trade_count,
--                  volume, vwap} (keys sorted; DECIMAL text with trailing zeros removed = the ECMAScript shortest form of
--                  these numbers). Must equal hashCanonical(quoteRecord(bar)) in ingest/quotes/chain.ts (pinned by tests).
--                  The RECORD_JSON placeholder is replaced by RECORD_JSON_SQL (jobs/quotes/quotes-fold.ts), the one
--                  definition of the record text that the per-file fold uses too.
--   version        1.. per key in source order; is_current = last version (continues the chain)
--   chain_start    first version of the first day of ticker+adjustment; day_start = first version of its day
--   source_idx     index of (dataset, content_sha256) in TEMP TABLE quote_fold_sources: the leaf template of the source
--   day_index      0.. trading days within the chain
-- Exact duplicates (same key and record from a later source or line) are left in TEMP TABLE quote_duplicates (→ rejects).
CREATE OR REPLACE TEMP TABLE quote_fold_sources AS
SELECT (row_number() OVER (ORDER BY dataset, content_sha256) - 1)::INTEGER AS source_idx, dataset, content_sha256
FROM (SELECT DISTINCT dataset, content_sha256 FROM quote_bar_inputs);

CREATE OR REPLACE TEMP TABLE quote_hashed AS
SELECT i.*, s.source_idx, sha256(/*RECORD_JSON*/NULL) AS record_sha256
FROM quote_bar_inputs i JOIN quote_fold_sources s USING (dataset, content_sha256);
