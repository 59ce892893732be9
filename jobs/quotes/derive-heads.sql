-- The chain heads store `quote_heads` (packed store, lib/warehouse/packed-store.ts; read by lib/quote-heads.ts): what
-- the latest-quote answer, the identity card's latest close and a history page's chain need, found without reading
-- quote_bars (docs/quotes-and-transcripts.md, "Serving layout"). Key 0: the JSON array of every ticker, in key order;
-- key i (1-based): the i-th ticker's record
--   {ticker, chains: [...], stale: {n, first, last} | null}
-- with chains in service/quotes/quote-chains.sql's order (newest last_date first, raw first on a tie), each
--   {adjustment, first_date, last_date, days, part, head, parent_leaf_hash, tail, source}
-- part: ordinal of the one quote_bars file holding the chain (in the table's file order), null when it spans files;
-- head: the newest bar with quote-rows.sql's columns; parent_leaf_hash: the leaf hash of the bar before it (null for
-- a one-day chain); tail: the 30 bars before the head, newest first (fewer in a shorter chain: a default history
-- page, 30 days and the parent of the oldest, is head + tail); source: the head's source file as service/quotes/quote-sources.sql picks it (null when sources has
-- none); stale: the ticker's stale split-adjusted days (quote_split_adjustments), null when none.
-- Reads TEMP VIEW quote_heads_batch (made by the caller, writeQuoteHeads: quote_bars' columns plus `part_file`
-- (VARCHAR, the bar's file), the bars of one batch of tickers), TEMP TABLE quote_heads_parts (file, part: each file's
-- ordinal) and TEMP TABLE quote_heads_keys (k, ticker: every ticker's key). Run once per batch: the top-31 states of
-- every chain at once ran out of the publish's 1 GB memory at full scale (22 M bars).
-- Cost (issue 22 item 3): the chain's part is looked up once per chain from its one file name (not per bar), and the
-- 31 newest bars are found by their dates first (a chain has one bar per date in quote_bars), so the bar structs are
-- built for those bars only: about 15 % less CPU on a 504,000-bar file, the same records.
-- The record is spliced from JSON texts (2026-11-26): each bar's to_json once, the 31 newest as arg_max's top-N list
-- (ordered newest first), a chain's and the record's members written in the order to_json writes the struct's, chains
-- ordered by list_sort of small structs. Ordered list aggregates of the nested bar structs and one to_json of the whole
-- record took 8 s of a 9 s derive at full scale (8,000 tickers); now about a quarter of that CPU, the same records
-- byte for byte (test/quotes/quote-heads-text.test.ts against the previous SELECT).
-- Tails (fast path in key order): quote_heads_batch then holds only each chain's newest 31 bars (the children's
-- quote_bar_tails parts), and TEMP TABLE quote_heads_spans (ticker, adjustment, first_date, days) the whole chain's first
-- date and day count (the chain parts); otherwise quote_heads_spans is empty and both come from the bars. The same
-- records either way (test/quotes/quote-heads-tails.test.ts).
-- Key 0 is written by quote-heads-index.sql. Params: none.
-- Columns: k (INTEGER key), v (JSON text).
WITH g0 AS (
  SELECT ticker, adjustment, min(quote_date) AS first_date, max(quote_date) AS last_date, count(*)::INTEGER AS days,
         CASE WHEN min(part_file) = max(part_file) THEN min(part_file) END AS part_file,
         list_min(arg_max(quote_date, quote_date, 31)) AS cutoff
  FROM quote_heads_batch
  GROUP BY ticker, adjustment
), g AS (
  SELECT g0.ticker, g0.adjustment, coalesce(s.first_date, g0.first_date) AS first_date, g0.last_date,
         coalesce(s.days, g0.days) AS days, g0.part_file, g0.cutoff
  FROM g0 LEFT JOIN quote_heads_spans s ON s.ticker = g0.ticker AND s.adjustment = g0.adjustment
), c AS (
  -- Each bar's JSON text once (the text to_json writes for it nested in the record), the 31 newest newest first
  -- (arg_max's top-N list is ordered by the value, descending; dates are unique within a chain).
  SELECT g.ticker, g.adjustment, any_value(g.first_date) AS first_date, any_value(g.last_date) AS last_date,
         any_value(g.days) AS days, any_value(p.part) AS part,
         arg_max(to_json({ticker: b.ticker, adjustment: b.adjustment, quote_date: b.quote_date, open: b.open, high: b.high, low: b.low,
               "close": b."close", volume: b.volume, vwap: b.vwap, trade_count: b.trade_count, flags: b.flags, dataset: b.dataset,
               content_sha256: b.content_sha256, day_index: b.day_index, leaf_hash: b.leaf_hash})::VARCHAR, b.quote_date, 31) AS bars,
         arg_max(b.leaf_hash, b.quote_date, 2) AS leaves,
         arg_max(b.dataset, b.quote_date) AS dataset, arg_max(b.content_sha256, b.quote_date) AS content_sha256
  FROM quote_heads_batch b
  JOIN g ON b.ticker = g.ticker AND b.adjustment = g.adjustment AND b.quote_date >= g.cutoff
  LEFT JOIN quote_heads_parts p ON p.file = g.part_file
  GROUP BY g.ticker, g.adjustment
), s AS (
  SELECT dataset, content_sha256, arg_min(source_url, k) AS source_url, arg_min(retrieved_at, k) AS retrieved_at,
         arg_min(leaf_hash, k) AS leaf_hash
  FROM sources, LATERAL (SELECT (retrieved_at, source_url, leaf_hash) AS k)
  GROUP BY dataset, content_sha256
), ch AS (
  -- A chain's JSON text: the members to_json writes for the struct, in its order, the bars' texts spliced in.
  SELECT c.ticker, c.adjustment, c.last_date,
         concat('{"adjustment":', coalesce(to_json(c.adjustment)::VARCHAR, 'null'), ',"first_date":', coalesce(to_json(c.first_date)::VARCHAR, 'null'),
                ',"last_date":', coalesce(to_json(c.last_date)::VARCHAR, 'null'), ',"days":', coalesce(to_json(c.days)::VARCHAR, 'null'),
                ',"part":', coalesce(to_json(c.part)::VARCHAR, 'null'), ',"head":', c.bars[1],
                ',"parent_leaf_hash":', coalesce(to_json(c.leaves[2])::VARCHAR, 'null'), ',"tail":[', array_to_string(c.bars[2:], ','),
                '],"source":', CASE WHEN s.leaf_hash IS NOT NULL THEN to_json({source_url: s.source_url, retrieved_at: s.retrieved_at, leaf_hash: s.leaf_hash})::VARCHAR ELSE 'null' END,
                '}') AS j
  FROM c LEFT JOIN s ON s.dataset = c.dataset AND s.content_sha256 = c.content_sha256
), t AS (
  -- Newest last_date first, raw first on a tie (then the adjustment's name): a list of small structs sorted, not an
  -- ordered aggregate of nested structs.
  SELECT ticker,
         concat('[', array_to_string(list_transform(list_sort(list({d: last_date, r: adjustment = 'raw', a: adjustment, j: j}), 'DESC'), x -> x.j), ','), ']') AS chains
  FROM ch
  GROUP BY ticker
), st AS (
  SELECT ticker, {n: count(*)::INTEGER, first: min(quote_date), last: max(quote_date)} AS stale
  FROM quote_split_adjustments WHERE status = 'stale' GROUP BY ticker
), k AS (
  SELECT keys.k, t.ticker, t.chains FROM t JOIN quote_heads_keys keys USING (ticker)
)
SELECT k.k, concat('{"ticker":', to_json(k.ticker)::VARCHAR, ',"chains":', k.chains, ',"stale":', coalesce(to_json(st.stale)::VARCHAR, 'null'), '}') AS v
FROM k LEFT JOIN st USING (ticker)
