-- Quotes domain tables (end-of-day bars). See README "Quotes and transcripts".
-- Prices DECIMAL(18,6): the record hashed into each leaf uses their shortest decimal form.

-- Parsed bars as read from every input file (one part per file); consumed and dropped by the derive step.
CREATE TABLE IF NOT EXISTS quote_bar_inputs (
  ticker          VARCHAR NOT NULL,
  quote_date      DATE NOT NULL,
  adjustment      VARCHAR NOT NULL,   -- 'raw' | 'split_dividend'
  open            DECIMAL(18,6) NOT NULL,
  high            DECIMAL(18,6) NOT NULL,
  low             DECIMAL(18,6) NOT NULL,
  close           DECIMAL(18,6) NOT NULL,
  volume          BIGINT NOT NULL,
  vwap            DECIMAL(18,6),
  trade_count     BIGINT,
  dataset         VARCHAR NOT NULL,   -- e.g. alpaca/bars-1day-adjusted
  content_sha256  VARCHAR NOT NULL,   -- of the file the bar was read from
  source_order    VARCHAR NOT NULL,   -- retrieved_at|path: later sources supersede earlier ones for the same key
  file            VARCHAR NOT NULL,
  line            BIGINT NOT NULL
);

-- One current bar per (ticker, adjustment, quote_date), sorted by that key. The origin leaf is NOT stored as JSON:
-- it is rebuilt from these columns (record), the source (sources.content_sha256) and the previous day's leaf_hash.
CREATE TABLE IF NOT EXISTS quote_bars (
  ticker          VARCHAR NOT NULL,
  adjustment      VARCHAR NOT NULL,
  quote_date      DATE NOT NULL,
  open            DECIMAL(18,6) NOT NULL,
  high            DECIMAL(18,6) NOT NULL,
  low             DECIMAL(18,6) NOT NULL,
  close           DECIMAL(18,6) NOT NULL,
  volume          BIGINT NOT NULL,
  vwap            DECIMAL(18,6),
  trade_count     BIGINT,
  flags           VARCHAR[] NOT NULL,
  dataset         VARCHAR NOT NULL,
  content_sha256  VARCHAR NOT NULL,
  day_index       INTEGER NOT NULL,   -- 0 = first day of the chain (its parent is the source file's leaf)
  leaf_hash       VARCHAR NOT NULL,
  leaf_key        BIGINT NOT NULL     -- first 15 hex digits of leaf_hash (see quote_leaf_keys)
);

-- Lookup by leaf hash without an ART index over 20M rows (which does not fit the publish memory budget): the 60-bit
-- leaf_key of every current bar with its key. Parquet-only, like quote_bars: each file is sorted by leaf_key (on the
-- fast path one file per input file, written by its parse child), so row-group statistics find a key in one small
-- row group per file.
CREATE TABLE IF NOT EXISTS quote_leaf_keys (
  leaf_key    BIGINT NOT NULL,
  ticker      VARCHAR NOT NULL,
  adjustment  VARCHAR NOT NULL,
  quote_date  DATE NOT NULL
);

-- Superseded quote leaves (forks), cumulative: a version replaced by a corrected bar in a later file of the same run
-- ('superseded_in_input'), or a leaf of an earlier snapshot that the current chain no longer contains
-- ('corrected': the bar's values changed; 'rechained': same values, re-hashed because an earlier day changed).
CREATE TABLE IF NOT EXISTS quote_leaf_history (
  ticker          VARCHAR NOT NULL,
  adjustment      VARCHAR NOT NULL,
  quote_date      DATE NOT NULL,
  open            DECIMAL(18,6) NOT NULL,
  high            DECIMAL(18,6) NOT NULL,
  low             DECIMAL(18,6) NOT NULL,
  close           DECIMAL(18,6) NOT NULL,
  volume          BIGINT NOT NULL,
  vwap            DECIMAL(18,6),
  trade_count     BIGINT,
  dataset         VARCHAR NOT NULL,
  content_sha256  VARCHAR NOT NULL,
  leaf_hash       VARCHAR NOT NULL,
  parent          VARCHAR NOT NULL,
  superseded_by   VARCHAR,            -- leaf_hash of the current bar for the same key (NULL when the key disappeared)
  reason          VARCHAR NOT NULL,
  fork_date       DATE NOT NULL,      -- first date of this ticker+adjustment where the chains diverge
  recorded_run_id VARCHAR NOT NULL
);

-- Splits and cash dividends from Polygon's reference files (/v3/reference/splits, /v3/reference/dividends), read by
-- the polygon step (ingest/quotes/formats.ts parsePolygonReference): what the adjusted series rests on. One row per
-- action and file; carried forward by a run that reads no reference file.
CREATE TABLE IF NOT EXISTS quote_corporate_actions (
  ticker            VARCHAR NOT NULL,
  action            VARCHAR NOT NULL,   -- 'split' | 'dividend'
  ex_date           DATE NOT NULL,      -- split execution date or ex-dividend date
  split_from        DOUBLE,
  split_to          DOUBLE,
  cash_amount       DECIMAL(18,6),
  dividend_type     VARCHAR,
  declaration_date  DATE,
  record_date       DATE,
  pay_date          DATE,
  frequency         INTEGER,
  dataset           VARCHAR NOT NULL,
  content_sha256    VARCHAR NOT NULL,
  origin_leaf_hash  VARCHAR NOT NULL,
  file              VARCHAR NOT NULL,
  line              BIGINT NOT NULL
);

-- Splits applied to the bars (derived at publish by derive-split-adjustments.sql from quote_bars and the splits in
-- quote_corporate_actions): one row per raw bar of a ticker with a later split. Polygon's adjusted series is adjusted
-- for splits only, as of the day it was fetched: a grouped adjusted file fetched before a split is stale afterwards.
-- Here the split-adjusted bar is rebuilt from the raw bar (prices ÷ the product of split_to/split_from of every split
-- after the bar's date, volume ×) and compared with the stored adjusted bar of that day: 'derived' (no adjusted bar
-- stored: the day was fetched raw only), 'agrees' (within 0.5 %), 'stale' (the stored adjusted bar predates a split).
-- Dividends are kept in quote_corporate_actions but not applied (Polygon's adjusted bars ignore them too).
CREATE TABLE IF NOT EXISTS quote_split_adjustments (
  ticker                 VARCHAR NOT NULL,
  quote_date             DATE NOT NULL,
  split_factor           DOUBLE NOT NULL,    -- product of split_to / split_from over the splits after quote_date
  splits_after           INTEGER NOT NULL,
  raw_close              DECIMAL(18,6) NOT NULL,
  adjusted_open          DECIMAL(18,6) NOT NULL,
  adjusted_high          DECIMAL(18,6) NOT NULL,
  adjusted_low           DECIMAL(18,6) NOT NULL,
  adjusted_close         DECIMAL(18,6) NOT NULL,
  adjusted_volume        BIGINT NOT NULL,
  stored_adjusted_close  DECIMAL(18,6),      -- the split_dividend bar of that day, when one was read
  status                 VARCHAR NOT NULL,   -- derived | agrees | stale
  raw_leaf_hash          VARCHAR NOT NULL,   -- origin leaf of the raw bar
  stored_leaf_hash       VARCHAR,            -- origin leaf of the stored adjusted bar
  split_leaf_hashes      VARCHAR[] NOT NULL, -- origin leaves of the splits applied (quote_corporate_actions), by date
  served_leaf_hash       VARCHAR             -- 'stale' rows: the quote_split_adjusted leaf the routes serve for the day
                                             -- (ingest/quotes/chain.ts splitAdjustedLeaf), so /api/verify finds it
);
