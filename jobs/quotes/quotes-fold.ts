/**
 * Per-file chain fold, run by each parse child (csv and polygon steps) so the
 * heavy work (record hashes, the sequential leaf fold, flags, the served row)
 * happens in the parallel child jobs instead of once over every row at publish.
 *
 * A child has its file's valid bars in TEMP TABLE `quote_file_rows` (the
 * `quote_bar_inputs` columns; the per-file constants dataset, content_sha256,
 * source_order and file may be left out: they are bound from the source when the
 * part is written) and calls `foldFileChains`, which writes two
 * parts that publish reads directly (their directories are not domain tables,
 * so publish does not load them into the serving database on its own):
 *
 *  - `quote_bar_folds/<file>.parquet`: every bar of the file as its final
 *    `quote_bars` row (exactly that table's columns, with flags, `day_index`,
 *    `leaf_hash`, `leaf_key`), sorted by (ticker, adjustment, quote_date), zstd:
 *    on the fast path it is loaded as is and linked as the table's export;
 *  - `quote_bar_lines/<file>.parquet`: `source_order`, `file`, `line` of the same
 *    rows in the same order (the general path's version ordering and rejects);
 *  - `quote_file_chains/<file>.parquet`: one row per (ticker, adjustment) chain
 *    of the file (first/last date, days) with the file's source identity;
 *  - `quote_leaf_key_parts/<file>.parquet` (folded files only): the file's
 *    `quote_leaf_keys` rows sorted by `leaf_key`, small row groups: on the fast
 *    path these files are the table (each sorted, so a lookup reads one row
 *    group per file), so publish sorts nothing;
 *  - `quote_bar_tails/<file>.parquet` (folded files only): each chain's newest
 *    HEAD_TAIL_DAYS bars, the rows of the bars part, from which publish builds
 *    the chain heads store on the fast path in key order.
 *
 * The per-file leaves are the final leaves exactly when no chain spans several
 * files and no key occurs twice (checked per file here, across files at
 * publish: `quotes.pipeline.ts` derive). Then publish only concatenates the
 * parts (fast path); otherwise it rebuilds `quote_bar_inputs` from the parts and
 * runs the general derive (duplicates, versions, forks), ignoring these leaves.
 *
 * Byte identity: the record hash is SHA-256 of the same JSON text that
 * derive-chain-input.sql builds in SQL, and the leaf hash the same `quoteLeafHash` as the
 * general fold (golden hashes in test/quotes; fast and general paths are
 * compared in test/quotes/fold.test.ts).
 *
 * Transfer: DuckDB returns each chain's record texts as ONE value (in date
 * order; UTF-8 bytes, a BLOB, hashed without a JS string per text) and takes
 * the chain's leaf hashes back as one string (64 hex characters per day), cut
 * per row with `substr` in SQL: a few hundred values per file cross the JS
 * boundary instead of one per row.
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBBlobVector, DuckDBConnection, DuckDBMaterializedResult } from '@duckdb/node-api';
import { foldChainLeavesBytes, leafTemplate, type QuoteSource } from '../../ingest/quotes/chain.ts';
import { bindParams, queryRows, quoteLiteral } from '../../lib/warehouse/duckdb.ts';
import type { StagingRun } from '../../lib/warehouse/staging.ts';

/** Part directories written by the children and read by the quotes derive. */
export const FOLD_PARTS = 'quote_bar_folds';
export const CHAIN_PARTS = 'quote_file_chains';
export const LINE_PARTS = 'quote_bar_lines';
export const KEY_PARTS = 'quote_leaf_key_parts';
/**
 * Per-file tails (folded files only): the newest HEAD_TAIL_DAYS bars of each chain of the file, exactly as in its bars
 * part (the same select), sorted by (ticker, adjustment, quote_date). On the fast path in key order publish builds the
 * chain heads store from these (about 12,000 rows per 504,000-bar file) and the chain parts' first dates and day
 * counts, instead of reading every bar of quote_bars again (issue 22 item 3: that read was most of publish).
 */
export const TAIL_PARTS = 'quote_bar_tails';
/** Bars per chain the heads store holds: the head and the 30 days before it (derive-heads.sql). */
export const HEAD_TAIL_DAYS = 31;

/**
 * Shortest decimal text of a DECIMAL(18,6) column of `i`: the DECIMAL text (always six decimals) without its trailing
 * zeros and a bare point (`121.730000` → `121.73`, `5.000000` → `5`): the same bytes as
 * `rtrim(rtrim(CAST(x AS VARCHAR), '0'), '.')` (pinned by test/quotes/record-text.test.ts). The six decimals are
 * always there, so the text is cut by the longest run of zeros it ends with (suffix tests, no regular expression):
 * about 65 % of the CPU of one RE2 `regexp_replace(…, '\.?0+$', '')` per value, itself 60 % of the two rtrim calls
 * (10M values here; the record text is the largest DuckDB cost of the per-file fold, issue 22 item 3).
 */
const decimalText = (col: string) => {
  const s = `CAST(i.${col} AS VARCHAR)`;
  const cut = [6, 5, 4, 3, 2, 1].map((z) => `WHEN ends_with(${s}, '${'0'.repeat(z)}') THEN ${s}[:${z === 6 ? -8 : -(z + 1)}]`);
  return `(CASE ${cut.join(' ')} ELSE ${s} END)`;
};

/**
 * SQL of the record JSON of a `quote_bar_inputs`-shaped row aliased `i`: the RFC 8785 text of `quoteRecord`
 * (keys sorted, prices in shortest decimal form); derive-chain-input.sql hashes the same expression with `sha256()`.
 * One `concat` (a single allocation per row; every nullable part is coalesced, so it equals the `||` chain).
 */
export const RECORD_JSON_SQL = `concat('{"adjustment":"', i.adjustment, '","close":', ${decimalText('close')}, ',"high":', ${decimalText('high')},
    ',"low":', ${decimalText('low')}, ',"open":', ${decimalText('open')}, ',"quote_date":"', CAST(i.quote_date AS VARCHAR),
    '","ticker":"', i.ticker, '","trade_count":', coalesce(CAST(i.trade_count AS VARCHAR), 'null'),
    ',"volume":', CAST(i.volume AS VARCHAR), ',"vwap":', coalesce(${decimalText('vwap')}, 'null'), '}')`;

/** The `quote_bar_inputs` columns (the general derive's input), as stored in the per-file fold parts. */
export const QUOTE_INPUT_COLUMNS = [
  'ticker',
  'quote_date',
  'adjustment',
  'open',
  'high',
  'low',
  'close',
  'volume',
  'vwap',
  'trade_count',
  'dataset',
  'content_sha256',
  'source_order',
  'file',
  'line',
];

/**
 * Validation flags of a row aliased `c` (docs/quotes-and-transcripts.md); derive-bars.sql takes this list too. A row
 * that passes every check (the negation of each condition, all true) gets the empty list without building the list and
 * running the lambda (most bars: ~0.04 s of CPU less per 504,000-bar file); any other row, a NULL comparison
 * included, takes the list as before, so the flags are the same. The range checks multiply by 1.2 as DECIMAL(38,1):
 * `1.2 * DECIMAL(18,6)` stays DECIMAL(18,7) and overflows above ~8.3e10, which failed the whole file (the product is
 * exact either way, so no flag changes below that).
 *
 * The guard (the first WHEN) only has to imply that no flag holds: a row it lets through gets `[]`, any other row the
 * exact list. Its two range checks are stricter than the flags' and in DOUBLE (the DECIMAL(38,7) products were half of
 * the flags' CPU, ~0.05 s per 504,000-bar file, issue 22 item 3): `low > 0` (so every price of a row that passes the
 * other checks is positive), `high <= 1.19999 * max` and `1.19999 * low >= min`. A DECIMAL(18,6) cast to DOUBLE and a
 * product of two DOUBLEs are each within a relative 1e-15 of the exact value, far inside the 1e-5 margin, so a row
 * that passes them passes the exact `high <= 1.2 * max` and `low * 1.2 >= min`; a row between the two bounds takes the
 * list, which is empty for it (test/quotes/flags.test.ts compares with the exact guard, edges included).
 */
export const FLAGS_SQL = `CASE WHEN c.high >= greatest(c.open, c.close) AND c.low <= least(c.open, c.close) AND c.high >= c.low AND c.volume >= 0
      AND c.low > 0 AND c.high::DOUBLE <= 1.19999 * greatest(c.open, c.close, coalesce(c.vwap, c.close))::DOUBLE
      AND 1.19999 * c.low::DOUBLE >= least(c.open, c.close, coalesce(c.vwap, c.close))::DOUBLE
      AND (c.vwap IS NULL OR (c.vwap <= c.high AND c.vwap >= c.low))
    THEN []::VARCHAR[]
    ELSE list_filter([
    CASE WHEN c.high < greatest(c.open, c.close) THEN 'high_below_open_close' END,
    CASE WHEN c.low > least(c.open, c.close) THEN 'low_above_open_close' END,
    CASE WHEN c.high < c.low THEN 'high_below_low' END,
    CASE WHEN c.volume < 0 THEN 'negative_volume' END,
    CASE WHEN c.high > 1.2::DECIMAL(38,1) * greatest(c.open, c.close, coalesce(c.vwap, c.close)) THEN 'high_above_range' END,
    CASE WHEN c.low * 1.2::DECIMAL(38,1) < least(c.open, c.close, coalesce(c.vwap, c.close)) THEN 'low_below_range' END,
    CASE WHEN c.vwap IS NOT NULL AND (c.vwap > c.high OR c.vwap < c.low) THEN 'vwap_outside_range' END
  ], x -> x IS NOT NULL) END`;

/**
 * Aggregate over the rows of one chain of `quote_file_rows` aliased `i`: true when the aggregate received them in row
 * order, each row once (its row ids, in the order the aggregate saw them, are one ascending run). Every aggregate of one
 * GROUP BY is fed the same rows in the same order, so beside a `string_agg` without ORDER BY it tells that the texts
 * are in row order; for a file in key order (the fold's order scan: row order is key order, no repeated key) that is
 * date order. Checked in DuckDB instead of parsing each record text's date in JS (~0.07 s of the JS thread per
 * 504,000-bar file, issue 22 item 3); test/quotes/record-text.test.ts.
 */
export const ROW_ORDER_SQL = 'list(i.rowid) = range(min(i.rowid), max(i.rowid) + 1)';

/**
 * Rows per row group of a `quote_bars` file (the fold part is the table's file on the fast path): a ticker's chains
 * (about 5,000 rows at 10 years, raw and adjusted) span one or two groups, so reading its latest bars decodes ~10k
 * rows instead of 123k (over 4 files: 15 ms against 43 ms per query here; files 2 % larger).
 */
export const BAR_ROW_GROUP = 10_240;

/**
 * zstd level of the parts a child writes: level 1 instead of DuckDB's default 3. The parts are written once and read
 * often, and zstd decodes every level alike; at level 1 writing a file's bars part cost ~0.6 s of CPU instead of
 * ~0.85 s (the 64-hex-digit leaf hashes, which hardly compress, took 0.25 s of it at level 3 and 0.1 s at level 1)
 * and the part came out about the same size (measured on a 504,000-bar file, issue 22 item 3).
 * Parquet format version 2 (DuckDB's delta encodings for the integer, date and decimal columns and the strings that
 * leave the dictionary, like the leaf hashes): writing a 504,000-bar bars part took 0.25 s of CPU instead of 0.36-0.39,
 * the part is 6 % smaller, and reading it back (whole, or one ticker's rows) costs the same or less (issue 22 item 3).
 * The same rows; the files' bytes differ from a v1 part (QUOTES_PARSER quotes-v2).
 */
export const PART_ZSTD = 'COMPRESSION zstd, COMPRESSION_LEVEL 1, PARQUET_VERSION V2';

/** Rows per row group of a leaf-key part: a lookup by key decodes one group per file. */
export const KEY_ROW_GROUP = 8192;

/**
 * `joinLeavesOnce` false: a folded file in key order takes its chains' first rows and day counts from an aggregate over
 * its rows and its leaves in a second join, as before 2026-11-26 evening (test/quotes/fold-leaves-join.test.ts compares
 * both ways' parts byte for byte). `prefetch` false: each batch's record texts are read only once the batch before was
 * folded, as before 2026-11-27. `batchRows`: bars per batch of the JS fold (record texts of about this many bars are
 * held at once, ~200 bytes each; two batches while the next is read ahead). Tests lower it to fold a file in several
 * batches (test/quotes/fold-prefetch.test.ts compares the parts with and without prefetch byte for byte).
 */
export const quoteFoldOptions = { joinLeavesOnce: true, prefetch: true, batchRows: 65_536 };

export interface FileFoldResult {
  rows: number;
  chains: number;
  /** False when the file repeats a key (ticker, adjustment, date): publish takes the general path. */
  folded: boolean;
  /** True when the file's rows were in key order (ticker, adjustment, date): the fold sorted nothing. */
  ordered: boolean;
}

/** One chain's record texts as the fold reads them: UTF-8 bytes, one text per day joined by newlines. */
interface ChainTexts {
  ticker: string;
  adjustment: string;
  recs: Uint8Array;
  days: number;
  in_order: boolean;
  /** The chain's first row id in `quote_file_rows` (in key order its rows are first_row .. first_row + days - 1). */
  first_row: bigint;
}

/**
 * The rows of the record-text query (ticker, adjustment, recs BLOB, days, in_order, first_row) read from its vectors: the texts
 * stay bytes (a BLOB's bytes are copied once, never decoded into a JS string and split).
 */
function chainTexts(result: DuckDBMaterializedResult): ChainTexts[] {
  // getItemBytes copies a value over 12 bytes (every record text) and gives a view into the vector otherwise: copied
  // here, so no text depends on the result's memory once it is gone.
  const ownBytes = (b: Uint8Array | null) => (b === null ? new Uint8Array(0) : b.byteLength <= 12 ? Uint8Array.from(b) : b);
  const out: ChainTexts[] = [];
  for (let ci = 0; ci < result.chunkCount; ci++) {
    const chunk = result.getChunk(ci);
    const [ticker, adjustment, recs, days, inOrder, firstRow] = [0, 1, 2, 3, 4, 5].map((k) => chunk.getColumnVector(k));
    // rowCount is a native call: read once per chunk, not per row.
    for (let i = 0, rows = chunk.rowCount; i < rows; i++)
      out.push({
        ticker: String(ticker!.getItem(i)),
        adjustment: String(adjustment!.getItem(i)),
        recs: ownBytes((recs as DuckDBBlobVector).getItemBytes(i)),
        days: Number(days!.getItem(i)),
        in_order: inOrder!.getItem(i) === true,
        first_row: firstRow!.getItem(i) as bigint,
      });
  }
  return out;
}

/**
 * Folds the chains of one file. Reads TEMP TABLE `quote_file_rows` (dropped at
 * the end) and writes the file's `quote_bar_folds` and `quote_file_chains`
 * parts under `key` (temp name, then rename: a retry overwrites its own parts).
 * `key` is the file's relative path (the `file` column) and `sourceOrder` its
 * `source_order` (quotes.pipeline.ts).
 */
export async function foldFileChains(
  conn: DuckDBConnection,
  run: StagingRun,
  key: string,
  src: QuoteSource,
  sourceOrder: string,
): Promise<FileFoldResult> {
  const foldTarget = run.partPath(FOLD_PARTS, key);
  const linesTarget = run.partPath(LINE_PARTS, key);
  const chainTarget = run.partPath(CHAIN_PARTS, key);
  const keysTarget = run.partPath(KEY_PARTS, key);
  const tailsTarget = run.partPath(TAIL_PARTS, key);
  const tmpFold = `${foldTarget}.${process.pid}.tmp`;
  const tmpLines = `${linesTarget}.${process.pid}.tmp`;
  const tmpChain = `${chainTarget}.${process.pid}.tmp`;
  const tmpKeys = `${keysTarget}.${process.pid}.tmp`;
  const tmpTails = `${tailsTarget}.${process.pid}.tmp`;
  await mkdir(path.dirname(foldTarget), { recursive: true });
  await mkdir(path.dirname(linesTarget), { recursive: true });
  await mkdir(path.dirname(chainTarget), { recursive: true });
  await mkdir(path.dirname(keysTarget), { recursive: true });
  await mkdir(path.dirname(tailsTarget), { recursive: true });
  try {
    // One scan: is the file in key order, and (then) does a key repeat (equal neighbours)? Out of order: group to find repeats.
    const [scan] = await queryRows(
      conn,
      `SELECT coalesce(bool_and(k >= p OR p IS NULL), true) AS ordered, coalesce(bool_or(k = p), false) AS adjacent_dup
      FROM (SELECT (ticker, adjustment, quote_date) AS k, lag((ticker, adjustment, quote_date)) OVER () AS p FROM quote_file_rows)`,
    );
    const ordered = scan.ordered === true;
    const dup = ordered
      ? scan.adjacent_dup === true
      : (
          await queryRows(
            conn,
            `SELECT EXISTS (SELECT 1 FROM quote_file_rows GROUP BY ticker, adjustment, quote_date HAVING count(*) > 1) AS dup`,
          )
        )[0].dup === true;
    const folded = !dup;
    let rowCount = -1;
    const t = leafTemplate(src);
    // Per chain of a folded file: its leaves (64 hex digits per day, in date order), its first row id and its days.
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE quote_file_leaves (ticker VARCHAR, adjustment VARCHAR, leaves VARCHAR, first_row BIGINT, days BIGINT)`,
    );
    if (folded) {
      // Per batch of tickers, one BLOB per chain: its record JSON texts in date order as UTF-8, '\n'-separated (dates
      // are unique: checked above; the texts hold no newline). Hashed here with the one-shot SHA-256 (cheaper than
      // DuckDB's sha256()). Batches of about `quoteFoldOptions.batchRows` bars bound the bytes held at once.
      const tickers = await queryRows(conn, `SELECT ticker, count(*)::BIGINT AS n FROM quote_file_rows GROUP BY ticker ORDER BY ticker`);
      rowCount = tickers.reduce((a, r) => a + Number(r.n), 0);
      const batches: Array<[string, string]> = [];
      for (let k = 0, rows = 0, lo = ''; k < tickers.length; k++) {
        if (rows === 0) lo = String(tickers[k].ticker);
        rows += Number(tickers[k].n);
        if (rows >= quoteFoldOptions.batchRows || k === tickers.length - 1) {
          batches.push([lo, String(tickers[k].ticker)]);
          rows = 0;
        }
      }
      // The next batch's record texts are read (DuckDB, on a libuv thread) while this batch is folded (the JS thread),
      // so a child keeps a core busy during its own fold instead of waiting for the JS thread and then for DuckDB in
      // turn (issue 22 item 3). The leaves are appended after the last batch: an appender writes to its connection when
      // a chunk fills, and no statement may run on the connection meanwhile.
      const folds: Array<{ ticker: string; adjustment: string; leaves: string; first_row: bigint; days: number }> = [];
      const readBatch = async ([lo, hi]: [string, string]) => {
        let chains = await read(lo, hi, !ordered);
        if (!chains.every((c) => c.in_order)) chains = await read(lo, hi, true);
        return chains;
      };
      // Without ORDER BY the aggregate appends rows in scan order, which is date order for a file in key order (a
      // scratch database runs one thread); that order is checked in the same aggregate (ROW_ORDER_SQL), and a
      // batch with any chain out of row order is read again with ORDER BY (sorting the texts costs ~40% of the query).
      const read = async (lo: string, hi: string, sorted: boolean) => {
        const stmt = await conn.prepare(
          `SELECT ticker, adjustment, encode(string_agg(${RECORD_JSON_SQL}, '\n'${sorted ? ' ORDER BY i.quote_date' : ''})) AS recs,
            count(*)::INTEGER AS days, ${sorted ? 'true' : ROW_ORDER_SQL} AS in_order, min(i.rowid)::BIGINT AS first_row
        FROM quote_file_rows i WHERE ticker BETWEEN $lo AND $hi GROUP BY ticker, adjustment`,
        );
        try {
          bindParams(stmt, { lo, hi });
          return chainTexts(await stmt.run());
        } finally {
          stmt.destroySync();
        }
      };
      let next = batches.length ? readBatch(batches[0]!) : null;
      try {
        for (let b = 0; next; b++) {
          const chains = await next;
          next = b + 1 < batches.length && quoteFoldOptions.prefetch ? readBatch(batches[b + 1]!) : null;
          // The fold (ingest/quotes/chain.ts QuoteChainFold with one version per day): day 0's parent is the source leaf.
          for (const c of chains)
            folds.push({
              ticker: c.ticker,
              adjustment: c.adjustment,
              leaves: foldChainLeavesBytes(t, c.recs, c.days),
              first_row: c.first_row,
              days: c.days,
            });
          if (!next && b + 1 < batches.length) next = readBatch(batches[b + 1]!);
        }
      } catch (e) {
        // A fold that throws while the next read runs: that read ends before the caller's cleanup uses the connection.
        await next?.catch(() => {});
        throw e;
      }
      const app = await conn.createAppender('quote_file_leaves', 'main', 'temp');
      try {
        for (const f of folds) {
          app.appendVarchar(f.ticker);
          app.appendVarchar(f.adjustment);
          app.appendVarchar(f.leaves);
          app.appendBigInt(f.first_row);
          app.appendBigInt(BigInt(f.days));
          app.endRow();
        }
      } finally {
        app.closeSync();
      }
    }
    // Sorted output only when the file is not already in key order (bench and vendor files usually are).
    // In key order the day index is the row's offset from its chain's first row (no window sort). A folded file in key
    // order takes its chain's first row and leaves in ONE join with quote_file_leaves (the first rows came with the
    // record texts), instead of a join with an aggregate over every row and a second join for the leaves: the same
    // rows in the same order (issue 22 item 3).
    const leavesJoined = quoteFoldOptions.joinLeavesOnce && ordered && folded;
    // The leaf of row `c` from the leaves of its chain in `of` (c: joined in, l: quote_file_leaves joined as l).
    // `n`: the first n hex digits of the leaf (the leaf key takes 15 of them straight from the chain's leaves: the same
    // text as cutting the leaf first, one substr less per row).
    const leafOf = (of: 'c' | 'l', n = 64) => (folded ? `substr(${of}.leaves, c.day_index * 64 + 1, ${n})` : 'NULL::VARCHAR');
    const withLeaves = `SELECT r.*, r.rowid - l.first_row AS day_index, l.leaves FROM quote_file_rows r JOIN quote_file_leaves l USING (ticker, adjustment)`;
    const numbered = ordered
      ? `SELECT r.*, r.rowid - f.first_row AS day_index FROM quote_file_rows r JOIN (SELECT ticker, adjustment, min(rowid) AS first_row FROM quote_file_rows GROUP BY ALL) f USING (ticker, adjustment)`
      : `SELECT *, row_number() OVER (PARTITION BY ticker, adjustment ORDER BY quote_date, line) - 1 AS day_index FROM quote_file_rows`;
    // The bars part has exactly the quote_bars columns (zstd, the snapshot's row groups): on the fast path publish loads
    // it and links it as the table's export. Line numbers (and the file's constants) go to a side part in the same
    // row order, read only by the general path.
    const order = ordered ? '' : 'ORDER BY c.ticker, c.adjustment, c.quote_date, c.line';
    const body = leavesJoined
      ? `FROM (${withLeaves}) c`
      : `FROM (${numbered}) c LEFT JOIN quote_file_leaves l USING (ticker, adjustment) ${order}`;
    // The bars part's columns, shared by its tails part (the same values: the heads store is built from either).
    const barColumns = (
      of: 'c' | 'l',
    ) => `c.ticker, c.adjustment, c.quote_date, c.open, c.high, c.low, c.close, c.volume, c.vwap, c.trade_count, ${FLAGS_SQL} AS flags,
        $dataset::VARCHAR AS dataset, $content_sha256::VARCHAR AS content_sha256, c.day_index::INTEGER AS day_index,
        ${leafOf(of)} AS leaf_hash, ('0x' || ${leafOf(of, 15)})::BIGINT AS leaf_key`;
    const writeBars = async (sql: string) => {
      const copy = await conn.prepare(sql);
      copy.bindVarchar(copy.parameterIndex('dataset'), src.source);
      copy.bindVarchar(copy.parameterIndex('content_sha256'), src.content_sha256);
      await copy.run();
      copy.destroySync();
    };
    await writeBars(
      `COPY (SELECT ${barColumns(leavesJoined ? 'c' : 'l')} ${body}) TO ${quoteLiteral(tmpFold)} (FORMAT parquet, ${PART_ZSTD}, ROW_GROUP_SIZE ${BAR_ROW_GROUP})`,
    );
    // The tails: the rows are cut to each chain's newest HEAD_TAIL_DAYS before anything else is computed for them (the
    // leaves are joined to the cut rows only: filtering rows that carry their chain's leaves cost ~0.4 s per file).
    const chainRows = leavesJoined
      ? 'SELECT ticker, adjustment, first_row, days FROM quote_file_leaves'
      : 'SELECT ticker, adjustment, min(rowid) AS first_row, count(*) AS days FROM quote_file_rows GROUP BY ALL';
    const tailRows = ordered
      ? `SELECT r.*, r.rowid - f.first_row AS day_index FROM quote_file_rows r JOIN (${chainRows}) f
           USING (ticker, adjustment) WHERE r.rowid - f.first_row >= f.days - ${HEAD_TAIL_DAYS}`
      : `SELECT * EXCLUDE (days) FROM (SELECT *, row_number() OVER (PARTITION BY ticker, adjustment ORDER BY quote_date, line) - 1 AS day_index,
           count(*) OVER (PARTITION BY ticker, adjustment) AS days FROM quote_file_rows) WHERE day_index >= days - ${HEAD_TAIL_DAYS}`;
    if (folded)
      await writeBars(`COPY (
        SELECT ${barColumns('l')} FROM (${tailRows}) c LEFT JOIN quote_file_leaves l USING (ticker, adjustment) ORDER BY c.ticker, c.adjustment, c.quote_date
      ) TO ${quoteLiteral(tmpTails)} (FORMAT parquet, ${PART_ZSTD})`);
    // In key order the bars part is the table's scan order (the joins above keep it: one thread), so the lines are
    // read straight from the table, without the joins.
    const lines =
      await conn.prepare(`COPY (SELECT $source_order::VARCHAR AS source_order, $file::VARCHAR AS file, c.line::BIGINT AS line ${ordered ? 'FROM quote_file_rows c' : body})
      TO ${quoteLiteral(tmpLines)} (FORMAT parquet, ${PART_ZSTD})`);
    lines.bindVarchar(lines.parameterIndex('source_order'), sourceOrder);
    lines.bindVarchar(lines.parameterIndex('file'), key);
    await lines.run();
    lines.destroySync();
    const stmt = await conn.prepare(`COPY (
      SELECT $file::VARCHAR AS file, ticker, adjustment, min(quote_date) AS first_date, max(quote_date) AS last_date, count(*)::BIGINT AS days,
        $dataset::VARCHAR AS dataset, $content_sha256::VARCHAR AS content_sha256, $source_url::VARCHAR AS source_url,
        $retrieved_at::VARCHAR AS retrieved_at, $folded::BOOLEAN AS folded
      FROM quote_file_rows GROUP BY ticker, adjustment ORDER BY ticker, adjustment
    ) TO ${quoteLiteral(tmpChain)} (FORMAT parquet)`);
    stmt.bindVarchar(stmt.parameterIndex('file'), key);
    stmt.bindVarchar(stmt.parameterIndex('dataset'), src.source);
    stmt.bindVarchar(stmt.parameterIndex('content_sha256'), src.content_sha256);
    if (src.source_url === null) stmt.bindNull(stmt.parameterIndex('source_url'));
    else stmt.bindVarchar(stmt.parameterIndex('source_url'), src.source_url);
    if (src.retrieved_at === null) stmt.bindNull(stmt.parameterIndex('retrieved_at'));
    else stmt.bindVarchar(stmt.parameterIndex('retrieved_at'), src.retrieved_at);
    stmt.bindBoolean(stmt.parameterIndex('folded'), folded);
    await stmt.run();
    stmt.destroySync();
    // The leaf keys of a folded file, sorted by key (about 0.25 s per 500k bars here; publish then sorts nothing).
    if (folded) {
      await conn.run(`COPY (SELECT leaf_key, ticker, adjustment, quote_date FROM read_parquet(${quoteLiteral(tmpFold)}) ORDER BY leaf_key)
        TO ${quoteLiteral(tmpKeys)} (FORMAT parquet, ${PART_ZSTD}, ROW_GROUP_SIZE ${KEY_ROW_GROUP})`);
    }
    const n = rowCount >= 0 ? rowCount : Number((await queryRows(conn, `SELECT count(*)::BIGINT AS n FROM quote_file_rows`))[0].n);
    const [{ chains }] = await queryRows(conn, `SELECT count(*)::BIGINT AS chains FROM read_parquet(${quoteLiteral(tmpChain)})`);
    await rename(tmpFold, foldTarget);
    await rename(tmpLines, linesTarget);
    await rename(tmpChain, chainTarget);
    if (folded) {
      await rename(tmpKeys, keysTarget);
      await rename(tmpTails, tailsTarget);
    } else {
      await rm(keysTarget, { force: true });
      await rm(tailsTarget, { force: true });
    }
    return { rows: Number(n), chains: Number(chains), folded, ordered };
  } finally {
    await conn.run('DROP TABLE IF EXISTS quote_file_rows; DROP TABLE IF EXISTS quote_file_leaves');
    await rm(tmpFold, { force: true });
    await rm(tmpLines, { force: true });
    await rm(tmpChain, { force: true });
    await rm(tmpKeys, { force: true });
    await rm(tmpTails, { force: true });
  }
}
