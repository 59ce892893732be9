/**
 * The quotes pipeline: end-of-day bar files into `quote_bars`, each bar with a
 * daily origin chain (ingest/quotes/chain.ts), forks kept in
 * `quote_leaf_history`. Market context is joined at query time from the registry
 * snapshot (service/quotes/quotes.queries.ts).
 *
 * Inputs under `<inputDir>/quotes/`: any `*.csv` in a known quote format
 * (ingest/quotes/formats.ts; Alpaca daily = split/dividend adjusted, Alpaca SDK
 * = raw) and `*.json` Polygon aggregates responses (written by
 * jobs/quotes/polygon-client.ts with a `.meta.json` sidecar, or supplied).
 *
 * Steps (one child per file, run in parallel) parse files with DuckDB
 * `read_csv` (no JS per row) and fold each file's chains (record hashes in SQL,
 * the pure JS fold, flags: jobs/quotes/quotes-fold.ts). At publish, when no
 * (ticker, adjustment) chain spans several files and no key repeats, the
 * derive only concatenates those parts (fast path); otherwise the general
 * derive recomputes record hashes in SQL over all rows, streams them in chain
 * order through the same fold, and joins the leaf hashes back (duplicates,
 * corrected bars, forks). The same bytes always give the same chain; a
 * changed bar produces new leaves and the old ones move to quote_leaf_history
 * (docs/quotes-and-transcripts.md). Incremental: an unchanged input is not
 * parsed again, its parts are hard-linked from the current snapshot at plan
 * time (jobs/quotes/quote-input-parts.ts), so publish sees a full run's parts.
 */
import { closeSync, createReadStream, createWriteStream, openSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { z } from 'zod';
import { loadSql, queryRows, quoteLiteral } from '../../lib/warehouse/duckdb.ts';
import { defineDomain } from '../../lib/warehouse/domain.ts';
import { toPartKey } from '../../lib/warehouse/layout.ts';
import { leafTemplate, QuoteChainFold, splitAdjustedLeaf, splitAdjustedRecord, type LeafTemplate } from '../../ingest/quotes/chain.ts';
import {
  detectQuoteCsvFormat,
  parsePolygonAggs,
  parsePolygonReference,
  type ParsedQuotes,
  type ParsedReference,
} from '../../ingest/quotes/formats.ts';
import { PolygonResultsSplitter, RENAMED_TICKER_KEY } from '../../ingest/quotes/polygon-split.ts';
import type { Adjustment } from '../../ingest/quotes/quote.schema.ts';
import { ParseError } from '../../lib/errors.ts';
import { createRecordLeaf, type OriginLeaf } from '../../lib/origin.ts';
import type { IngestedSource } from '../../lib/warehouse/staging.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import { QUOTE_HEADS_STORE } from '../../lib/quote-heads.ts';
import {
  BAR_ROW_GROUP,
  KEY_ROW_GROUP,
  FOLD_PARTS,
  CHAIN_PARTS,
  LINE_PARTS,
  KEY_PARTS,
  TAIL_PARTS,
  foldFileChains,
  QUOTE_INPUT_COLUMNS,
  FLAGS_SQL,
  RECORD_JSON_SQL,
} from './quotes-fold.ts';
import { describeInput, digestInputs, listInputs, readInput, readFirstLine } from '../inputs.ts';
import { readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { STATE_FILE, type IncrementalState } from '../../lib/warehouse/incremental.ts';
import {
  INPUT_PARTS_DIR,
  linkInputParts,
  linkSortedGroup,
  QUOTES_PARSER,
  SORTED_GROUPS_DIR,
  saveInputParts,
  savedInputParts,
  sidecarSha256,
} from './quote-input-parts.ts';
import { hashCanonical } from '../../lib/hash.ts';
import type { ChildJob, Pipeline, StepContext, StepResult } from '../pipeline.ts';
import {
  planPolygonFetch,
  POLYGON_FETCH_STEP,
  POLYGON_GROUPED_STEP,
  POLYGON_REFERENCE_STEP,
  polygonFetchPayload,
  polygonGroupedPayload,
  polygonReferencePayload,
  processPolygonFetch,
  processPolygonGroupedFetch,
  processPolygonReferenceFetch,
} from './quotes-fetch.ts';

export const quotesDomain = defineDomain({
  domain: 'quotes',
  tables: './tables.sql',
  indexes: './indexes.sql',
  base: import.meta.url,
  replaceTables: ['quote_bars', 'quote_bar_inputs', 'quote_leaf_keys', 'quote_split_adjustments'],
  // quote_bars (20M rows at full scale) is parquet-only: on the fast path the children's fold parts ARE the table
  // (linked, never loaded into serving.duckdb: loading them cost ~27 s of the 2-minute budget); readers query it
  // through a view over the files, zone maps by (ticker, adjustment, quote_date).
  // quote_leaf_keys likewise: on the fast path the children's per-file key parts (each sorted by leaf_key).
  parquetTables: ['quote_bars', 'quote_leaf_keys'],
});

const filePayload = z.object({ file: z.string(), rel: z.string() });

/** Order in which sources supersede each other for the same key: fetch time, then relative path. */
function sourceOrder(retrievedAt: string | null, rel: string): string {
  return `${retrievedAt ?? ''}|${rel}`;
}

/** A CSV column name as an SQL identifier (the names come from the file's header, matched against a known layout). */
const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
type CsvColumns = ReturnType<typeof detectQuoteCsvFormat>['columns'];
/** The bar's ticker from the CSV symbol column (both reads). */
const csvTickerSql = (c: CsvColumns) => `upper(replace(replace(trim(${q(c.symbol)}), '.', '-'), '/', '-'))`;
/**
 * The trading day from the CSV timestamp column (both reads). Alpaca writes midnight New York as 04:00/05:00 UTC: the
 * date part is the trading day (no per-row time-zone math).
 */
const csvDateSql = (c: CsvColumns) =>
  `CASE WHEN ${q(c.timestamp)} SIMILAR TO '\\d{4}-\\d{2}-\\d{2} 0[45]:00:00\\+00:00' THEN TRY_CAST(substr(${q(c.timestamp)}, 1, 10) AS DATE)
               ELSE CAST(timezone('America/New_York', TRY_CAST(${q(c.timestamp)} AS TIMESTAMPTZ)) AS DATE) END`;
/**
 * A whole count (volume, trade count) from a DOUBLE: rounded, NULL when it is not a finite number inside BIGINT's
 * range. TRY_CAST, not CAST: a volume of `inf`, `nan` or 1e30 made the whole file fail ("out of range for INT64")
 * instead of one rejected row (test/quotes/csv-typed-read.test.ts).
 */
const csvWholeSql = (double: string) => `TRY_CAST(round(${double}) AS BIGINT)`;
/** A row of `quote_file_rows` is a bar when this holds (both reads; NULL counts as false). */
const CSV_TICKER_OK_SQL = `ticker ~ '^[A-Z0-9][A-Z0-9.\\-]{0,14}$'`;
/** `tickerOk`: the ticker check of the row (the typed read takes it per distinct symbol, the same expression). */
const csvValidSql = (tickerOk = CSV_TICKER_OK_SQL) =>
  `${tickerOk} AND quote_date IS NOT NULL AND open IS NOT NULL AND high IS NOT NULL AND low IS NOT NULL AND close IS NOT NULL AND volume IS NOT NULL`;

/** `typed` false: every CSV is read the TRY_CAST way only (tests compare both reads). */
export const quoteCsvOptions = { typed: true };

/**
 * The typed read of a quote CSV (issue 22 item 3): `read_csv` types the price columns as DECIMAL(18,6) and the counts
 * as DOUBLE itself, instead of reading every field as text and typing it again with TRY_CAST (~0.12 s of CPU less per
 * 504,000-bar file). For every text the reader accepts it gives TRY_CAST's value (the same casts: pinned over crafted
 * edge texts in test/quotes/csv-typed-read.test.ts); a text it cannot type fails the statement, where TRY_CAST gives
 * NULL. So this read gives the TRY_CAST read's `quote_file_rows` exactly when it succeeds and every row is valid
 * (then no row is rejected and `raw_line` is NULL throughout); it returns true then. Otherwise it returns false and the
 * caller reads the file the TRY_CAST way, which also reports the rejected rows with their lines and raw text.
 */
async function readCsvTyped(
  conn: DuckDBConnection,
  file: string,
  headerCols: string[],
  c: CsvColumns,
  adjustment: Adjustment,
): Promise<boolean> {
  const types = new Map<string, string>([
    [c.open, 'DECIMAL(18,6)'],
    [c.high, 'DECIMAL(18,6)'],
    [c.low, 'DECIMAL(18,6)'],
    [c.close, 'DECIMAL(18,6)'],
    [c.vwap, 'DECIMAL(18,6)'],
    [c.volume, 'DOUBLE'],
    [c.trade_count, 'DOUBLE'],
  ]);
  // The ticker (and its check) and the trading day are computed once per distinct symbol and timestamp text of the
  // file and joined back (a file repeats each symbol and each day's timestamp for many rows): the same functions of the
  // same texts, about 0.1 s of CPU less per 504,000-bar file than per row (issue 22 item 3). A NULL text matches no
  // key and gets NULL, as the functions give for NULL. The joins keep the file's order (one thread: the fold then
  // sorts nothing; were it not kept, the fold would sort, the same parts).
  const sym = q(c.symbol);
  const ts = q(c.timestamp);
  try {
    const stmt = await conn.prepare(`
      CREATE OR REPLACE TEMP TABLE quote_file_rows AS
      WITH f AS MATERIALIZED (
        SELECT *, (row_number() OVER () + 1)::BIGINT AS line
        FROM read_csv(${quoteLiteral(file)}, header = true, auto_detect = false,
                      columns = {${headerCols.map((n) => `${quoteLiteral(n)}: '${types.get(n) ?? 'VARCHAR'}'`).join(', ')}})
      ), syms AS (
        SELECT sym_text, ticker, ${CSV_TICKER_OK_SQL} AS ticker_ok
        FROM (SELECT ${sym} AS sym_text, ${csvTickerSql(c)} AS ticker FROM (SELECT DISTINCT ${sym} FROM f WHERE ${sym} IS NOT NULL))
      ), days AS (
        SELECT ${ts} AS ts_text, ${csvDateSql(c)} AS quote_date FROM (SELECT DISTINCT ${ts} FROM f WHERE ${ts} IS NOT NULL)
      )
      SELECT * EXCLUDE (ticker_ok), NULL::VARCHAR AS raw_line FROM (
        SELECT *, coalesce(${csvValidSql('ticker_ok')}, false) AS ok FROM (
          SELECT syms.ticker, days.quote_date, $adjustment AS adjustment,
            f.${q(c.open)} AS open, f.${q(c.high)} AS high, f.${q(c.low)} AS low, f.${q(c.close)} AS close,
            ${csvWholeSql(`f.${q(c.volume)}`)} AS volume, f.${q(c.vwap)} AS vwap, ${csvWholeSql(`f.${q(c.trade_count)}`)} AS trade_count, f.line,
            syms.ticker_ok
          FROM f LEFT JOIN syms ON f.${sym} = syms.sym_text LEFT JOIN days ON f.${ts} = days.ts_text
          ))`);
    try {
      stmt.bindVarchar(stmt.parameterIndex('adjustment'), adjustment);
      await stmt.run();
    } finally {
      stmt.destroySync();
    }
  } catch {
    return false; // a text the reader cannot type (TRY_CAST gives NULL there), or any other error: the TRY_CAST read decides
  }
  const [{ all_ok }] = await queryRows(conn, 'SELECT coalesce(bool_and(ok), true) AS all_ok FROM quote_file_rows');
  if (all_ok === true) return true;
  await conn.run('DROP TABLE quote_file_rows');
  return false;
}

async function processCsv(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { file, rel } = ctx.data;
  const header = await readFirstLine(file);
  const layout = detectQuoteCsvFormat(header, file);
  // read_csv maps declared columns by position: declare them in the file's own header order.
  const headerCols = header
    .replace(/^\uFEFF/, '')
    .trim()
    .split(',')
    .map((h) => h.trim());
  const src = await describeInput(file, layout.dataset, null);
  const c = layout.columns;
  const counts = await ctx.run.withScratch(async (conn) => {
    // The typed read first (quoteCsvOptions): when it loads the file and every row is valid, `quote_file_rows` is what
    // the TRY_CAST read below gives; anything else is read again below, which also reports the rejects.
    const typedOk = quoteCsvOptions.typed && (await readCsvTyped(conn, file, headerCols, c, layout.adjustment));
    // Typed with TRY_CAST so one bad row becomes a reject, not a failed file. Line = data row + 1 (header).
    // `ok` is the validity check; the raw line is rebuilt only for rejected rows.
    const rawCols = Object.values(c);
    if (!typedOk) {
      const stmt = await conn.prepare(`
      CREATE OR REPLACE TEMP TABLE quote_file_rows AS
      WITH raw AS (
        SELECT *, (row_number() OVER () + 1)::BIGINT AS line
        FROM read_csv(${quoteLiteral(file)}, header = true, all_varchar = true, auto_detect = false,
                      columns = {${headerCols.map((n) => `${quoteLiteral(n)}: 'VARCHAR'`).join(', ')}})
      ), typed AS (
        SELECT
          ${csvTickerSql(c)} AS ticker,
          ${csvDateSql(c)} AS quote_date,
          $adjustment AS adjustment,
          TRY_CAST(${q(c.open)} AS DECIMAL(18,6)) AS open,
          TRY_CAST(${q(c.high)} AS DECIMAL(18,6)) AS high,
          TRY_CAST(${q(c.low)} AS DECIMAL(18,6)) AS low,
          TRY_CAST(${q(c.close)} AS DECIMAL(18,6)) AS close,
          ${csvWholeSql(`TRY_CAST(${q(c.volume)} AS DOUBLE)`)} AS volume,
          TRY_CAST(nullif(${q(c.vwap)}, '') AS DECIMAL(18,6)) AS vwap,
          ${csvWholeSql(`TRY_CAST(nullif(${q(c.trade_count)}, '') AS DOUBLE)`)} AS trade_count,
          line,
          ${rawCols.map((n, i) => `${q(n)} AS _raw${i}`).join(', ')}
        FROM raw
      )
      SELECT * EXCLUDE (${rawCols.map((_, i) => `_raw${i}`).join(', ')}),
        CASE WHEN NOT ok THEN concat_ws(',', ${rawCols.map((_, i) => `_raw${i}`).join(', ')}) END AS raw_line
      FROM (SELECT *, coalesce(${csvValidSql()}, false) AS ok FROM typed)`);
      stmt.bindVarchar(stmt.parameterIndex('adjustment'), layout.adjustment);
      await stmt.run();
      stmt.destroySync();
    }
    const bad = typedOk ? [] : await queryRows(conn, `SELECT line, raw_line FROM quote_file_rows WHERE NOT ok ORDER BY line LIMIT 10000`);
    // Rare: keep only the valid rows (a copy, so row ids stay dense for the fold's day index).
    if (bad.length)
      await conn.run(
        `CREATE TEMP TABLE quote_file_valid AS SELECT * FROM quote_file_rows WHERE ok; DROP TABLE quote_file_rows; ALTER TABLE quote_file_valid RENAME TO quote_file_rows`,
      );
    // Record hashes, the chain fold and the served rows of this file, in this child (jobs/quotes/quotes-fold.ts).
    const folded = await foldFileChains(conn, ctx.run, rel, src, sourceOrder(src.retrieved_at, rel));
    return { rows: folded.rows, bad, folded: folded.folded, ordered: folded.ordered, typed: typedOk };
  });
  await ctx.run.writeRejects(
    rel,
    counts.bad.map((b) => ({
      dataset: layout.dataset,
      file: rel,
      line: Number(b.line),
      reason: 'unparseable bar (ticker, date, price or volume missing or not a number)',
      raw: String(b.raw_line),
    })),
  );
  await ctx.run.recordSource(src, { rows: counts.rows, rejects: counts.bad.length }, rel);
  return {
    rows: counts.rows,
    rejects: counts.bad.length,
    detail: { format: layout.format, adjustment: layout.adjustment, folded: counts.folded, ordered: counts.ordered, typed: counts.typed },
  };
}

/** A Polygon reference file's splits or dividends, each row with its record leaf (parent: the file's source leaf). */
async function writeCorporateActions(
  ctx: StepContext<z.infer<typeof filePayload>>,
  parsed: ParsedReference,
  src: IngestedSource,
  rel: string,
): Promise<StepResult> {
  const leaves: OriginLeaf[] = [];
  const rows = parsed.actions.map((a, i) => {
    const leaf = createRecordLeaf(a, src);
    leaves.push(leaf);
    return { ...a, dataset: parsed.dataset, content_sha256: src.content_sha256, origin_leaf_hash: leaf.leaf_hash, file: rel, line: i };
  });
  await ctx.run.writeRows('quote_corporate_actions', rel, rows);
  await ctx.run.writeLeaves(`actions-${rel}`, leaves, 'quote_corporate_actions');
  await ctx.run.writeRejects(
    rel,
    parsed.rejects.map((r) => ({ dataset: parsed.dataset, file: rel, line: r.line, reason: r.reason, raw: r.raw })),
  );
  await ctx.run.recordSource(src, { rows: rows.length, rejects: parsed.rejects.length }, rel);
  return { rows: rows.length, rejects: parsed.rejects.length, detail: { format: `polygon-reference-${parsed.kind}` } };
}

/**
 * Files at least this large are never parsed whole in JS: their kind is sniffed from the head, and the document is
 * streamed apart (ingest/quotes/polygon-split.ts) into one line per result for DuckDB's newline-delimited reader (a
 * 500,000-result response parsed in JS took most of the ingest time and over 1 GB per parse child; read by DuckDB
 * as one object it ran out of the scratch database's memory; issue 22, item 3). Smaller files (fetched responses,
 * fixtures) are also parsed in JS first, for the exact errors and splits/dividends detection of
 * ingest/quotes/formats.ts. Every file's rows come from the same SQL (loadPolygonRows).
 */
export const POLYGON_SNIFF_MIN_BYTES = 8 << 20;

async function processPolygon(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { file, rel } = ctx.data;
  const size = (await stat(file)).size;
  const large = size >= POLYGON_SNIFF_MIN_BYTES;
  const input = large ? null : await readInput(file, 'polygon', null);
  // A splits or dividends reference file is read into quote_corporate_actions, never rejected as "not an aggregates response".
  // A fetched day's file (`{date}_splits.json`, `{date}_dividends.json`, further pages `.pN.json`) may list no action.
  const expected = /_(splits|dividends)(\.p\d+)?\.json$/.exec(rel)?.[1] as 'splits' | 'dividends' | undefined;
  if (input) {
    const reference = parsePolygonReference(input.bytes, rel, expected);
    if (reference) return writeCorporateActions(ctx, reference, { ...input.src, source: reference.dataset }, rel);
  } else if (expected || sniffPolygonReference(await readHead(file))) {
    const whole = await readInput(file, 'polygon', null);
    const reference = parsePolygonReference(whole.bytes, rel, expected);
    if (reference) return writeCorporateActions(ctx, reference, { ...whole.src, source: reference.dataset }, rel);
  }
  // Validation and rejects in JS (ingest/quotes/formats.ts); a large file's are computed only when DuckDB finds a bad result.
  let probe: ParsedQuotes | null = input ? parsePolygonAggs(input.bytes, rel) : null;
  const lines = `${ctx.run.partPath(FOLD_PARTS, rel)}.${process.pid}.ndjson`;
  await mkdir(path.dirname(lines), { recursive: true });
  try {
    // A small file's bytes are in memory already; a large one is split during the read that hashes it.
    const { doc, src: described, plain, renamed } = await splitPolygonResults(file, rel, lines, input);
    const adjustment: Adjustment = doc.adjusted === false ? 'raw' : 'split_dividend';
    const dataset = adjustment === 'raw' ? 'polygon/aggs-1day-raw' : 'polygon/aggs-1day-adjusted';
    // The dataset (raw or adjusted aggregates) is known only after parsing.
    const src = { ...described, source: dataset };
    const folded = await ctx.run.withScratch(async (conn) => {
      const { bad, read } = await loadPolygonRows(conn, lines, rel, adjustment, doc.ticker, plain, renamed);
      if (bad > 0) {
        probe ??= parsePolygonAggs(await readFile(file), rel);
        await conn.run(
          `CREATE TEMP TABLE quote_file_valid AS SELECT * FROM quote_file_rows WHERE ok; DROP TABLE quote_file_rows; ALTER TABLE quote_file_valid RENAME TO quote_file_rows`,
        );
      }
      return { ...(await foldFileChains(conn, ctx.run, rel, src, sourceOrder(src.retrieved_at, rel))), read };
    });
    const rejects = probe?.rejects ?? [];
    await ctx.run.writeRejects(
      rel,
      rejects.map((r) => ({ dataset, file: rel, line: r.line, reason: r.reason, raw: r.raw })),
    );
    await ctx.run.recordSource(src, { rows: folded.rows, rejects: rejects.length }, rel);
    return {
      rows: folded.rows,
      rejects: rejects.length,
      detail: { format: 'polygon-aggs', adjustment, plain, renamed, read: folded.read, folded: folded.folded, ordered: folded.ordered },
    };
  } finally {
    await rm(lines, { force: true });
  }
}

async function readHead(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(4096), 0, 4096, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** A reference response names `execution_date` (splits) or `ex_dividend_date` (dividends) in its first result. */
function sniffPolygonReference(head: Buffer): boolean {
  return /"(execution_date|ex_dividend_date)"\s*:/.test(head.toString('utf8'));
}

/** `renameTicker` false: the Polygon results are never renamed, so never read by `read_json` (tests compare both reads). */
export const polygonReadOptions = { renameTicker: true };

/**
 * Streams an aggregates response's results to `lines` (one JSON text per line, in order) and returns its source
 * description and the rest of the document parsed: its `ticker` and `adjusted` as parsePolygonAggs reads them (a
 * non-array `results` or a document that is not an object is a ParseError naming the file, as there). `renamed`: every
 * result was renamable and written with its `T` named `_` (PolygonResultsSplitter); when some results were renamed but
 * not all, the file is split again without renaming (its lines would mix both), so the lines are either all renamed or
 * none is.
 */
async function splitPolygonResults(
  file: string,
  rel: string,
  lines: string,
  input: { bytes: Buffer; src: IngestedSource } | null,
): Promise<{ doc: { ticker: unknown; adjusted: unknown }; src: IngestedSource; plain: boolean; renamed: boolean }> {
  let src: IngestedSource | null = input?.src ?? null;
  const split = async (rename: boolean) => {
    // The lines are written synchronously (a page-cache write of about a megabyte per chunk), so the splitter gathers
    // every chunk's lines in one buffer it reuses, not a fresh megabyte outside V8's heap per chunk (issue 22 item 3).
    const fd = openSync(lines, 'w');
    const splitter = new PolygonResultsSplitter(
      rel,
      (b) => {
        for (let at = 0; at < b.length; ) at += writeSync(fd, b, at, b.length - at);
      },
      true,
      rename,
      true,
    );
    const feed = (chunk: Buffer) => splitter.push(chunk);
    try {
      if (input) splitter.push(input.bytes);
      else if (src) for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) feed(chunk as Buffer);
      else src = await describeInput(file, 'polygon', null, feed);
      // The last bytes the splitter kept (a result cut by a chunk's end) give their lines before the file is closed.
      splitter.flush();
    } finally {
      closeSync(fd);
    }
    return splitter;
  };
  let splitter = await split(polygonReadOptions.renameTicker);
  if (!splitter.renamed && splitter.renamedResults > 0) splitter = await split(false);
  let doc: unknown;
  try {
    doc = JSON.parse(splitter.end());
  } catch (e) {
    if (e instanceof ParseError) throw e;
    throw new ParseError(`invalid JSON: ${(e as Error).message}`, { file: rel });
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc) || !Array.isArray((doc as { results?: unknown }).results ?? []))
    throw new ParseError('not a Polygon aggregates response (no results array)', { file: rel });
  const d = doc as { ticker?: unknown; adjusted?: unknown };
  const renamed = polygonReadOptions.renameTicker && splitter.renamed;
  return { doc: { ticker: d.ticker ?? null, adjusted: d.adjusted }, src: src!, plain: splitter.plain, renamed };
}

/**
 * True when the DOUBLE `x` is in BIGINT's range [-2^63, 2^63), so that the cast of its Math.round succeeds: a double of
 * that magnitude beyond 2^52 is already whole, and none lies within 0.5 of either bound, so the range of `x` and of its
 * rounding are the same. NaN, the infinities and NULL fail it (DuckDB orders NaN above every number), as they fail
 * wholeCount in ingest/quotes/formats.ts.
 */
export const BIGINT_DOUBLE_SQL = (x: string) => `(${x} >= -9223372036854775808::DOUBLE AND ${x} < 9223372036854775808::DOUBLE)`;
/**
 * Math.round(x) in SQL, for a DOUBLE `x` (an expression without side effects): ties toward +∞, and no `x + 0.5`
 * (which rounds 0.49999999999999994 up). For x ≥ 0 that is DuckDB's `round(x)` (C's `round`, ties away from zero,
 * exact), which costs less than the `floor`/`ceil` form, so only x < 0 (and NaN) take that form; the same values
 * (test/quotes/polygon-round.test.ts pins both against Math.round and the `floor`/`ceil` form alone; issue 22 item 3).
 */
export const mathRoundSql = (x: string) => `(CASE WHEN ${x} >= 0 THEN round(${x}) ELSE ${mathRoundFloorSql(x)} END)`;
/** Math.round(x) by `floor`/`ceil` alone (the form before mathRoundSql; the test compares both). */
export const mathRoundFloorSql = (x: string) => `(CASE WHEN ${x} - floor(${x}) >= 0.5 THEN ceil(${x}) ELSE floor(${x}) END)`;

/** How loadPolygonRows read a file's results (the child's `detail.read`). */
type PolygonRead = 'read_json' | 'json_transform' | 'json_extract';

/**
 * Loads the results of a Polygon aggregates response (one JSON text per line of `lines`) into TEMP TABLE
 * `quote_file_rows` (the CSV path's columns, `line` = result index), typed exactly as parsePolygonAggs does in JS
 * (pinned by test/quotes/polygon-sql.test.ts and the golden hashes of the fixtures): the ticker is `T`, else the
 * document's `ticker`, normalised; the trading day is the New York date of `t`; prices are rounded to 6 decimals as
 * `Math.round(x * 1e6) / 1e6`, volume and trade count as `Math.round`. Returns the number of results lacking a
 * ticker, timestamp, o/h/l/c or v (`ok` false), and which read gave the rows.
 *
 * Three reads, the same rows: `plain` (every result plain, PolygonResultsSplitter): the values are read typed in one
 * pass by `json_transform` (test/quotes/polygon-plain.test.ts); `renamed` too (every result renamable, its `T` written
 * as `_`): by `read_json` with typed columns, one JSON parse per line instead of two (`read_ndjson_objects`, then
 * `json_transform`), about 0.05 s of CPU less per 504,000-result file (issue 22 item 3;
 * test/quotes/polygon-renamed.test.ts). `read_json` fails on a result that names a column twice (where the others take
 * the first), or on anything else: then the `json_transform` read decides, with the ticker named `_`.
 */
async function loadPolygonRows(
  conn: DuckDBConnection,
  lines: string,
  rel: string,
  adjustment: Adjustment,
  docTicker: unknown,
  plain: boolean,
  renamed: boolean,
): Promise<{ bad: number; read: PolygonRead }> {
  let read: PolygonRead = renamed ? 'read_json' : plain ? 'json_transform' : 'json_extract';
  if (read === 'read_json') {
    try {
      await runPolygonLoad(conn, lines, rel, adjustment, docTicker, read, RENAMED_TICKER_KEY);
    } catch {
      read = 'json_transform';
    }
  }
  if (read !== 'read_json') await runPolygonLoad(conn, lines, rel, adjustment, docTicker, read, renamed ? RENAMED_TICKER_KEY : 'T');
  const [{ n }] = await queryRows(conn, `SELECT count(*)::BIGINT AS n FROM quote_file_rows WHERE NOT ok`);
  return { bad: Number(n), read };
}

/** loadPolygonRows' statement by one read; `tickerKey` names the results' ticker member (`T`, or `_` when renamed). */
async function runPolygonLoad(
  conn: DuckDBConnection,
  lines: string,
  rel: string,
  adjustment: Adjustment,
  docTicker: unknown,
  read: PolygonRead,
  tickerKey: string,
): Promise<void> {
  // JSON paths are case-sensitive (`T` the ticker, `t` the timestamp); DuckDB struct names are not, hence JSON.
  // One parse per result extracts every field as its JSON text (a list in FIELDS order, NULL when absent); each is then
  // typed from that text, without parsing it again: the value is valid JSON, so it is a number exactly when its text
  // begins with `-` or a digit (then cast from text to DOUBLE, the value JSON gives it), a string when it begins with a
  // quote. Typing through json_type and CAST(JSON) parsed every value twice more and cost ~2.5x this (issue 22, item 3).
  const empty = (await stat(lines)).size === 0;
  const FIELDS = [tickerKey, 't', 'o', 'h', 'l', 'c', 'v', 'vw', 'n'];
  const at = (k: string) => `x[${FIELDS.indexOf(k) + 1}]`;
  const typed = read !== 'json_extract';
  // A plain file (every result's `T` a string without escapes, every other member a finite number: PolygonResultsSplitter)
  // is read typed in one pass: json_transform gives each field's value (the first of a repeated name, as json_extract
  // does; matched case-sensitively, so `T` and `t` apart, read by position), which for those JSON types is exactly what
  // the general typing below gives. About half the CPU of extracting the texts and typing them again (issue 22, item 3).
  // The fields are taken out of the struct in the query that numbers the rows, not one level up: DuckDB 1.5 fails to
  // bind a struct of names equal but for case read through a window's child (an internal error).
  // A renamed file (the ticker member named `_`, so no two fields' names are equal but for case) is read by read_json
  // with the same types as columns: the same values, one parse (its JSON transform is json_transform's).
  const types = FIELDS.map((k) => [k, k === tickerKey ? 'VARCHAR' : 'DOUBLE'] as const);
  const num = (k: string) =>
    typed
      ? `${k}_`
      : `(CASE WHEN ${at(k)}[1] IN ('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9') THEN CAST(${at(k)} AS DOUBLE) END) AS ${k}_`;
  // A string's value is the text inside its quotes unless it holds an escape (then JSON unescapes it); a JSON null is
  // SQL NULL; any other value is its JSON text, as before (`CAST(json AS VARCHAR)`).
  const T = at(tickerKey);
  const ticker = typed
    ? 'sym_'
    : `CASE WHEN ${T}[1] = '"' THEN (CASE WHEN contains(${T}, '\\') THEN ${T}::JSON->>'$' ELSE ${T}[2:-2] END) WHEN ${T} = 'null' THEN NULL ELSE ${T} END`;
  const source = empty ? `(SELECT NULL::JSON AS json WHERE false)` : `read_ndjson_objects(${quoteLiteral(lines)})`;
  const alias = (k: string) => (k === tickerKey ? 'sym_' : `${k}_`);
  const extract =
    read === 'read_json'
      ? empty
        ? `SELECT ${FIELDS.map((k) => `NULL::${k === tickerKey ? 'VARCHAR' : 'DOUBLE'} AS ${alias(k)}`).join(', ')}, 0::BIGINT AS line WHERE false`
        : `SELECT ${FIELDS.map((k) => `${q(k)} AS ${alias(k)}`).join(', ')}, row_number() OVER () - 1 AS line
      FROM read_json(${quoteLiteral(lines)}, format = 'newline_delimited', records = true, auto_detect = false,
                     columns = {${types.map(([k, t]) => `${quoteLiteral(k)}: '${t}'`).join(', ')}})`
      : typed
        ? `SELECT ${FIELDS.map((k, i) => `struct_extract_at(x, ${i + 1}) AS ${alias(k)}`).join(', ')}, row_number() OVER () - 1 AS line
      FROM (SELECT json_transform(json, '{${types.map(([k, t]) => `"${k}":"${t}"`).join(',')}}') AS x FROM ${source})`
        : `SELECT json_extract(json, [${FIELDS.map((k) => `'$.${k}'`).join(', ')}])::VARCHAR[] AS x, row_number() OVER () - 1 AS line
      FROM ${source}`;
  const r6 = (k: string) => `CAST(${mathRoundSql(`(${k}_ * 1e6)`)} / 1e6 AS DECIMAL(18,6))`;
  // A volume or trade count outside BIGINT's range is NULL, not an error that fails the file: the volume's NULL makes the
  // result a reject (`ok`), the trade count's is stored, as wholeCount in ingest/quotes/formats.ts (and the CSV reads).
  const round = (k: string) => `TRY_CAST(${mathRoundSql(`${k}_`)} AS BIGINT)`;
  // The volume's test, on the DOUBLE itself: true exactly when `round('v')` is not NULL (see BIGINT_DOUBLE_SQL). A CTE that
  // computed the volume once for both cost about 2 CPU-s more over the full-scale bench's 40 files.
  const stmt = await conn.prepare(`
    CREATE OR REPLACE TEMP TABLE quote_file_rows AS
    WITH u AS (
      ${extract}
    ), f AS MATERIALIZED (
      -- String(r.T ?? doc.ticker ?? ''): a JSON null or a missing T falls back to the document's ticker.
      SELECT coalesce(${ticker}, $doc_ticker, '') AS sym_text,
             ${FIELDS.slice(1).map(num).join(', ')}, CAST(line AS BIGINT) AS line
      FROM u
    ), names AS (
      -- The ticker and its check once per distinct name, joined back (a file repeats each name for many results): the
      -- same functions of the same text, cheaper than per result (issue 22 item 3; with the fold's changes of the same
      -- day a 504,000-result file took about 0.24 s of CPU less).
      SELECT sym_text, ticker, ticker ~ '^[A-Z0-9][A-Z0-9.\\-]{0,14}$' AS ticker_ok
      FROM (SELECT sym_text, upper(replace(replace(trim(sym_text), '.', '-'), '/', '-')) AS ticker FROM (SELECT DISTINCT sym_text FROM f))
    ), days AS (
      -- The New York date of each distinct instant, joined back: a file repeats each day's instant for every ticker, and
      -- the time-zone conversion per row was ~0.14 s of CPU per 504,000-result file (about 0.02 s this way). The join
      -- keeps the results' order here (one thread); were it not kept, the fold would sort (slower, the same rows).
      SELECT t_ AS day_t, CAST(timezone('America/New_York', to_timestamp(t_ / 1000)) AS DATE) AS day
      FROM (SELECT DISTINCT t_ FROM f WHERE t_ IS NOT NULL)
    )
    SELECT names.ticker,
           days.day AS quote_date,
           $adjustment AS adjustment,
           ${r6('o')} AS open, ${r6('h')} AS high, ${r6('l')} AS low, ${r6('c')} AS close, ${round('v')} AS volume,
           ${r6('vw')} AS vwap, ${round('n')} AS trade_count, line,
           coalesce(t_ IS NOT NULL AND isfinite(o_) AND isfinite(h_) AND isfinite(l_) AND isfinite(c_) AND ${BIGINT_DOUBLE_SQL('v_')}
                    AND names.ticker_ok, false) AS ok
    FROM f LEFT JOIN names ON f.sym_text = names.sym_text LEFT JOIN days ON f.t_ = days.day_t`);
  stmt.bindVarchar(stmt.parameterIndex('adjustment'), adjustment);
  // String(doc.ticker): the document's ticker as JS would print it (null when absent).
  const t = docTicker === null || docTicker === undefined ? null : String(docTicker);
  if (t === null) stmt.bindNull(stmt.parameterIndex('doc_ticker'));
  else stmt.bindVarchar(stmt.parameterIndex('doc_ticker'), t);
  try {
    await stmt.run();
  } catch (e) {
    // A malformed result is the file's fault; anything else (out of memory, I/O) is not, and is retried as it is.
    const message = (e as Error).message;
    if (/Malformed JSON|Invalid Input Error/i.test(message)) throw new ParseError(`invalid JSON: ${message.split('\n')[0]}`, { file: rel });
    throw e;
  } finally {
    stmt.destroySync();
  }
}

/**
 * Runs the chain fold over `quote_chain_input` in scan (= fold) order as one
 * streaming query, writing (leaf_hash, parent-if-superseded) lines to a
 * scratch CSV, then loads them as `quote_leaf_hashes` in the same order
 * (derive-bars.sql joins by position). Memory stays at one 2,048-row chunk.
 */
export async function foldQuoteChains(conn: DuckDBConnection, scratchFile: string): Promise<number> {
  const srcRows = await queryRows(
    conn,
    `
    SELECT c.source_idx, c.dataset, c.content_sha256, s.source_url, s.retrieved_at
    FROM quote_fold_sources c
    LEFT JOIN (SELECT dataset, content_sha256, arg_min(source_url, (retrieved_at, source_url, leaf_hash)) AS source_url,
                      arg_min(retrieved_at, (retrieved_at, source_url, leaf_hash)) AS retrieved_at
               FROM sources GROUP BY ALL) s USING (dataset, content_sha256)
    ORDER BY c.source_idx`,
  );
  const templates: LeafTemplate[] = [];
  for (const r of srcRows) {
    templates[Number(r.source_idx)] = leafTemplate({
      source: String(r.dataset),
      content_sha256: String(r.content_sha256),
      source_url: (r.source_url as string | null) ?? null,
      retrieved_at: (r.retrieved_at as string | null) ?? null,
    });
  }
  const fold = new QuoteChainFold();
  const out = createWriteStream(scratchFile, { highWaterMark: 1 << 20 });
  let total = 0;
  try {
    const result = await conn.stream(`SELECT chain_start, day_start, is_current, source_idx, record_sha256 FROM quote_chain_input`);
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const cs = chunk.getColumnValues(0) as boolean[];
      const ds = chunk.getColumnValues(1) as boolean[];
      const cur = chunk.getColumnValues(2) as boolean[];
      const si = chunk.getColumnValues(3) as number[];
      const rh = chunk.getColumnValues(4) as string[];
      let text = '';
      for (let k = 0; k < rh.length; k++) {
        const r = fold.next({ chain_start: cs[k], day_start: ds[k], current: cur[k], template: templates[si[k]], record_sha256: rh[k] });
        text += cur[k] ? `${r.leaf_hash},\n` : `${r.leaf_hash},${r.parent}\n`;
      }
      total += rh.length;
      if (!out.write(text)) await once(out, 'drain');
    }
  } finally {
    out.end();
    await once(out, 'close');
  }
  await conn.run(`CREATE OR REPLACE TEMP TABLE quote_leaf_hashes AS
    SELECT * FROM read_csv(${quoteLiteral(scratchFile)}, header = false, auto_detect = false, parallel = false,
                           columns = {'leaf_hash': 'VARCHAR', 'parent': 'VARCHAR'})`);
  const [{ n }] = await queryRows(conn, `SELECT count(*)::BIGINT AS n FROM quote_leaf_hashes`);
  if (Number(n) !== total) throw new Error(`quote fold wrote ${total} leaves but ${n} were loaded`);
  return total;
}

export interface QuoteDerivePlan {
  /** True when the per-file leaves are final (see jobs/quotes/quotes-fold.ts). */
  fast: boolean;
  reason: string;
  /** The fold parts; on the fast path in key order when `ordered`. */
  files: string[];
  /** The files' (ticker, adjustment) ranges are disjoint: concatenating them in `files` order is key order (no sort). */
  ordered: boolean;
  /**
   * Fast path: `files` grouped into runs whose key ranges overlap (in key order; the groups' ranges are disjoint),
   * each with the identity of its members' parts (`key`): a group of one file is linked as it is, a larger one is
   * sorted into one file (reused from the previous snapshot when its members were all reused).
   */
  groups: Array<{ files: string[]; key: string }>;
}

/**
 * Decides between the fast path (concatenate the children's folded parts) and
 * the general derive, from the small per-file chain summaries: the fast path
 * needs every file folded (no repeated key inside a file), no (ticker,
 * adjustment) chain in more than one file, no bars outside fold parts, and
 * each file's source identity equal to the one the general fold would use
 * (the `sources` row of its dataset and SHA-256).
 */
export async function chooseQuoteDerive(conn: DuckDBConnection, runDir: string): Promise<QuoteDerivePlan> {
  const list = async (dir: string) =>
    (await readdir(path.join(runDir, 'parts', dir)).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.parquet'))
      .sort()
      .map((f) => path.join(runDir, 'parts', dir, f));
  const files = await list(FOLD_PARTS);
  const chainFiles = await list(CHAIN_PARTS);
  const general = (reason: string): QuoteDerivePlan => ({ fast: false, reason, files, ordered: false, groups: [] });
  if (files.length === 0) return general('no per-file folds');
  const [{ n }] = await queryRows(conn, `SELECT count(*)::BIGINT AS n FROM quote_bar_inputs`);
  if (Number(n) > 0) return general('bars outside per-file folds');
  await conn.run(
    `CREATE OR REPLACE TEMP VIEW quote_chain_summary AS SELECT * FROM read_parquet([${chainFiles.map(quoteLiteral).join(', ')}])`,
  );
  try {
    const [c] = await queryRows(
      conn,
      `SELECT
        (SELECT count(*) FROM quote_chain_summary WHERE NOT folded)::BIGINT AS unfolded,
        (SELECT count(*) FROM (SELECT 1 FROM quote_chain_summary GROUP BY ticker, adjustment HAVING count(*) > 1))::BIGINT AS spanning,
        (SELECT count(*) FROM (SELECT DISTINCT dataset, content_sha256, source_url, retrieved_at FROM quote_chain_summary) f
           LEFT JOIN (SELECT dataset, content_sha256, count(DISTINCT (source_url, retrieved_at)) AS k, any_value(source_url) AS source_url, any_value(retrieved_at) AS retrieved_at
                      FROM sources GROUP BY ALL) s USING (dataset, content_sha256)
         WHERE s.k IS NULL OR s.k > 1 OR s.source_url IS DISTINCT FROM f.source_url OR s.retrieved_at IS DISTINCT FROM f.retrieved_at)::BIGINT AS source_mismatch`,
    );
    if (Number(c.unfolded) > 0) return general('a file repeats a key');
    if (Number(c.spanning) > 0) return general(`${c.spanning} chains span several files`);
    if (Number(c.source_mismatch) > 0) return general('source identity differs from the sources table');
    // A file starts a new group when its range begins after every earlier file's range ends.
    const ranges = await queryRows(
      conn,
      `WITH r AS (
        SELECT file, min({t: ticker, a: adjustment}) AS lo, max({t: ticker, a: adjustment}) AS hi,
               to_json(list([dataset, content_sha256, source_url, retrieved_at] ORDER BY ticker, adjustment)[1])::VARCHAR AS identity
        FROM quote_chain_summary GROUP BY file
      ), m AS (
        SELECT *, coalesce(lo > max(hi) OVER (ORDER BY lo, file ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), true) AS starts FROM r
      )
      SELECT file, identity, starts, sum(starts::INTEGER) OVER (ORDER BY lo, file ROWS UNBOUNDED PRECEDING) AS grp FROM m ORDER BY lo, file`,
    );
    const byKey = new Map(files.map((f) => [path.basename(f, '.parquet'), f]));
    const ordered = ranges.every((r) => r.starts === true);
    const inOrder = ranges.map((r) => byKey.get(toPartKey(String(r.file)))).filter((f): f is string => !!f);
    if (inOrder.length !== files.length) return general('fold parts and chain summaries differ');
    const groups: QuoteDerivePlan['groups'] = [];
    const members: string[][] = [];
    ranges.forEach((r, i) => {
      const g = Number(r.grp) - 1;
      if (!groups[g]) {
        groups[g] = { files: [], key: '' };
        members[g] = [];
      }
      groups[g].files.push(inOrder[i]);
      members[g].push(`${r.file}|${r.identity}`);
    });
    for (const [g, m] of members.entries()) groups[g].key = hashCanonical({ parser: QUOTES_PARSER, parts: m.sort() });
    return {
      fast: true,
      reason: ordered ? 'disjoint per-file chains' : `per-file chains (${sortedGroups(groups)} sorted at publish)`,
      files: inOrder,
      ordered,
      groups,
    };
  } finally {
    await conn.run('DROP VIEW quote_chain_summary');
  }
}

/**
 * On an incremental run with reused inputs (the run directory's incremental state): a WHERE clause restricting bars
 * to the (ticker, adjustment) chains that hold a bar of a file not reused, in this run's chain summaries or in the
 * previous snapshot's quote_bars (`prev`), materialised as temp table quote_changed_chains. Null on a full run.
 */
async function changedChainsScope(conn: DuckDBConnection, runDir: string, prev: string): Promise<string | null> {
  const state = await readFile(path.join(runDir, STATE_FILE), 'utf8').then(
    (t) => JSON.parse(t) as IncrementalState,
    () => null,
  );
  if (!state?.carry || state.reuse_sha256.length === 0) return null;
  const reuse = `[${state.reuse_sha256.map(quoteLiteral).join(', ')}]`;
  const chainFiles = (await readdir(path.join(runDir, 'parts', CHAIN_PARTS)).catch(() => [] as string[]))
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => quoteLiteral(path.join(runDir, 'parts', CHAIN_PARTS, f)));
  const current = chainFiles.length
    ? `SELECT ticker, adjustment FROM read_parquet([${chainFiles.join(', ')}]) WHERE NOT list_contains(${reuse}, content_sha256)`
    : 'SELECT NULL::VARCHAR AS ticker, NULL::VARCHAR AS adjustment WHERE false';
  await conn.run(`CREATE OR REPLACE TEMP TABLE quote_changed_chains AS
    SELECT DISTINCT ticker, adjustment FROM (
      ${current}
      UNION ALL
      SELECT ticker, adjustment FROM read_parquet(${quoteLiteral(prev)}) WHERE NOT list_contains(${reuse}, content_sha256))`);
  return ' WHERE (ticker, adjustment) IN (SELECT (ticker, adjustment) FROM quote_changed_chains)';
}

function sortedGroups(groups: QuoteDerivePlan['groups']): string {
  const n = groups.filter((g) => g.files.length > 1).length;
  return `${n} overlapping group${n === 1 ? '' : 's'}`;
}

/**
 * Rows per file of a sorted group (issue 22): 32 row groups of BAR_ROW_GROUP rows. A query names the one file
 * holding its ticker (the chain heads store, writeQuoteHeads), so what it pays for the file's footer and row-group
 * list is bounded by this, not by the table (one 1.49 GB file of 2,180 row groups cost 18-50 ms per query).
 */
export const BAR_FILE_ROWS = 32 * BAR_ROW_GROUP;

/**
 * Ticker ranges of a group's bars, each at most `maxRows` rows unless one ticker alone has more, from the chain
 * summaries (rows per ticker, in ticker order); a ticker is never split, so every chain lies in one file. Small
 * groups are cut into about 8 files of at least 4 row groups (the layout is the same at every scale).
 */
export function tickerBuckets(counts: Array<{ ticker: string; n: number }>, maxRows = BAR_FILE_ROWS): Array<{ lo: string; hi: string }> {
  const total = counts.reduce((a, c) => a + c.n, 0);
  const target = Math.min(maxRows, Math.max(4 * BAR_ROW_GROUP, Math.ceil(total / 8)));
  const out: Array<{ lo: string; hi: string }> = [];
  let rows = 0;
  for (const c of counts) {
    const last = out[out.length - 1];
    if (last && rows + c.n <= target) {
      last.hi = c.ticker;
      rows += c.n;
    } else {
      out.push({ lo: c.ticker, hi: c.ticker });
      rows = c.n;
    }
  }
  return out;
}

/**
 * The files of quote_bars on the fast path when key ranges overlap: a group of one file is its part; a larger group
 * is sorted into files of bounded size, cut at ticker boundaries (tickerBuckets), `input-parts/_sorted/<group
 * key>-NNNNN.parquet` of the run (kept with the snapshot), or those files of the previous snapshot are linked when
 * this run reused every member's parts (same parts: same sorted rows). Each file is one ticker range read from the
 * members (each member is sorted, so the range filter skips the other row groups) and sorted on its own.
 */
async function sortedGroupFiles(
  conn: DuckDBConnection,
  runDir: string,
  previousSnapshot: string | null,
  dataDir: string,
  groups: QuoteDerivePlan['groups'],
): Promise<string[]> {
  const state = await readFile(path.join(runDir, STATE_FILE), 'utf8').then(
    (t) => JSON.parse(t) as IncrementalState,
    () => null,
  );
  const reused = new Set(state?.carry ? state.reuse_sha256 : []);
  const dir = path.join(runDir, INPUT_PARTS_DIR, SORTED_GROUPS_DIR);
  await mkdir(dir, { recursive: true });
  const out: string[] = [];
  for (const g of groups) {
    if (g.files.length === 1) {
      out.push(g.files[0]);
      continue;
    }
    const prefix = g.key.slice(0, 32);
    const members = `[${g.files.map(quoteLiteral).join(', ')}]`;
    const shas = await queryRows(conn, `SELECT DISTINCT content_sha256 FROM read_parquet(${members})`);
    const allReused = shas.length > 0 && shas.every((r) => reused.has(String(r.content_sha256)));
    const linked = allReused && previousSnapshot ? await linkSortedGroup(dataDir, previousSnapshot, prefix, dir) : null;
    if (linked) {
      out.push(...linked);
      continue;
    }
    const summaries = g.files.map((f) => quoteLiteral(path.join(path.dirname(path.dirname(f)), CHAIN_PARTS, path.basename(f))));
    const counts = await queryRows(
      conn,
      `SELECT ticker, sum(days)::BIGINT AS n FROM read_parquet([${summaries.join(', ')}]) GROUP BY ticker ORDER BY ticker`,
    );
    const buckets = tickerBuckets(counts.map((c) => ({ ticker: String(c.ticker), n: Number(c.n) })));
    for (const [i, b] of buckets.entries()) {
      const target = path.join(dir, `${prefix}-${String(i).padStart(5, '0')}.parquet`);
      await conn.run(
        `COPY (SELECT * FROM read_parquet(${members}) WHERE ticker BETWEEN ${quoteLiteral(b.lo)} AND ${quoteLiteral(b.hi)}
               ORDER BY ticker, adjustment, quote_date)
         TO ${quoteLiteral(`${target}.tmp`)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${BAR_ROW_GROUP})`,
      );
      await rename(`${target}.tmp`, target);
      out.push(target);
    }
  }
  return out;
}

/**
 * Stores, for every stale split_dividend day, the hash of the quote_split_adjusted leaf the routes serve for it
 * (ingest/quotes/chain.ts splitAdjustedLeaf over the same values as service/quotes/split-adjusted-days.sql), so
 * /api/verify finds that leaf (findQuoteLeaf). Returns the number of days.
 */
async function fillServedLeafHashes(conn: DuckDBConnection, runDir: string): Promise<number> {
  const rows = await queryRows(conn, loadSql('./derive-served-leaves.sql', import.meta.url));
  if (rows.length === 0) return 0;
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const file = path.join(runDir, 'quote-served-leaves.ndjson');
  const out = createWriteStream(file);
  for (const r of rows) {
    const served = {
      ticker: String(r.ticker),
      quote_date: String(r.quote_date),
      adjustment: 'split_dividend' as const,
      open: Number(r.adjusted_open),
      high: Number(r.adjusted_high),
      low: Number(r.adjusted_low),
      close: Number(r.adjusted_close),
      volume: Number(r.adjusted_volume),
      vwap: num(r.adjusted_vwap),
      trade_count: num(r.trade_count),
    };
    const splits = (r.split_leaf_hashes as string[]).map(String);
    const first =
      r.split_leaf == null
        ? null
        : {
            source_url: (r.source_url as string | null) ?? null,
            retrieved_at: (r.retrieved_at as string | null) ?? null,
            content_sha256: (r.content_sha256 as string | null) ?? null,
          };
    const leaf = splitAdjustedLeaf(splitAdjustedRecord(served, Number(r.split_factor), splits), first, String(r.raw_leaf_hash));
    if (!out.write(`${JSON.stringify({ ticker: served.ticker, quote_date: served.quote_date, h: leaf.leaf_hash })}\n`))
      await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  await conn.run(`UPDATE quote_split_adjustments a SET served_leaf_hash = t.h
    FROM read_json(${quoteLiteral(file)}, format = 'newline_delimited', columns = {'ticker': 'VARCHAR', 'quote_date': 'DATE', 'h': 'VARCHAR'}) t
    WHERE a.ticker = t.ticker AND a.quote_date = t.quote_date`);
  await rm(file, { force: true });
  return rows.length;
}

async function everyFileExists(files: string[]): Promise<boolean> {
  for (const f of files)
    if (
      !(await stat(f).then(
        (st) => st.isFile(),
        () => false,
      ))
    )
      return false;
  return true;
}

/**
 * `batch`: tickers whose chain heads one SELECT of derive-heads.sql aggregates (tests lower it to cross batches).
 * `fromTails`: on the fast path in key order, build the store from the children's tails parts (tests turn it off to
 * compare with the store built from every bar).
 */
export const quoteHeadsOptions = { batch: 500, fromTails: true };

/**
 * Writes the packed store `quote_heads` (jobs/quotes/derive-heads.sql): per ticker its chains, each with the one
 * quote_bars file holding it (`part`: the ordinal of `barFiles`, the table's files in order; 0 for the general path's
 * single file), its head bar and the head's parent and source. Read by lib/quote-heads.ts.
 *
 * `tails` (fast path in key order, every folded file's TAIL_PARTS present): `files[i]` holds the newest bars of the
 * chains of `barFiles[i]`, and `chains` the chain parts (first date and day count of every chain). Then the heads
 * read those few rows instead of every bar of quote_bars (still in batches); the same records (test/quotes/quote-heads-tails.test.ts).
 */
async function writeQuoteHeads(
  conn: DuckDBConnection,
  ctx: DeriveContext,
  barFiles: string[] | null,
  tails: { files: string[]; chains: string[] } | null = null,
) {
  const list = `[${(tails?.files ?? barFiles ?? []).map(quoteLiteral).join(', ')}]`;
  // Each bar's file name; its ordinal is looked up per chain (derive-heads.sql), not per bar.
  const bars = barFiles
    ? `SELECT * EXCLUDE (filename), filename AS part_file FROM read_parquet(${list}, filename = true)`
    : `SELECT *, '' AS part_file FROM quote_bars`;
  // The tails (about 500,000 rows at full scale) are read once into memory, in key order, for every batch to filter.
  if (tails) await conn.run(`CREATE OR REPLACE TEMP TABLE quote_heads_tails AS ${bars}`);
  await conn.run(`CREATE OR REPLACE TEMP VIEW quote_heads_bars AS ${tails ? 'SELECT * FROM quote_heads_tails' : bars}`);
  await conn.run(
    barFiles
      ? `CREATE OR REPLACE TEMP TABLE quote_heads_parts AS SELECT unnest(${list}) AS file, (generate_subscripts(${list}, 1) - 1)::INTEGER AS part`
      : `CREATE OR REPLACE TEMP TABLE quote_heads_parts AS SELECT '' AS file, 0 AS part`,
  );
  await conn.run(
    tails
      ? `CREATE OR REPLACE TEMP TABLE quote_heads_spans AS SELECT ticker, adjustment, first_date, days::INTEGER AS days
           FROM read_parquet([${tails.chains.map(quoteLiteral).join(', ')}])`
      : `CREATE OR REPLACE TEMP TABLE quote_heads_spans (ticker VARCHAR, adjustment VARCHAR, first_date DATE, days INTEGER)`,
  );
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE quote_heads_keys AS
       SELECT row_number() OVER (ORDER BY ticker)::INTEGER AS k, ticker FROM (SELECT DISTINCT ticker FROM quote_heads_bars)`,
  );
  const keys = (await queryRows(conn, 'SELECT ticker FROM quote_heads_keys ORDER BY k')).map((r) => String(r.ticker));
  // Key 0, then the records in batches of tickers: DuckDB cannot spill the top-31 states of every chain at once.
  async function* selects(): AsyncIterable<string> {
    yield loadSql('./quote-heads-index.sql', import.meta.url);
    // Batches from the tails too: the ordered list aggregate of every chain at once ran out of the 1 GB at full scale
    // (8,000 chains of 31 bars each; its per-group buffers, not the rows).
    const batch = quoteHeadsOptions.batch;
    for (let i = 0; i < keys.length; i += batch) {
      const lo = keys[i]!;
      const hi = keys[Math.min(i + batch, keys.length) - 1]!;
      await conn.run(
        `CREATE OR REPLACE TEMP VIEW quote_heads_batch AS SELECT * FROM quote_heads_bars WHERE ticker BETWEEN ${quoteLiteral(lo)} AND ${quoteLiteral(hi)}`,
      );
      yield loadSql('./derive-heads.sql', import.meta.url);
    }
  }
  try {
    return await ctx.writePacked(QUOTE_HEADS_STORE, selects());
  } finally {
    await conn.run('DROP VIEW IF EXISTS quote_heads_batch');
    await conn.run('DROP TABLE IF EXISTS quote_heads_keys');
    await conn.run('DROP TABLE IF EXISTS quote_heads_spans');
    await conn.run('DROP TABLE IF EXISTS quote_heads_parts');
    await conn.run('DROP VIEW quote_heads_bars');
    await conn.run('DROP TABLE IF EXISTS quote_heads_tails');
  }
}

export const quotesPipeline: Pipeline = {
  domain: quotesDomain,
  // Polygon fetch jobs (QUOTES_FETCH_TICKERS + POLYGON_API_KEY, jobs/quotes/quotes-fetch.ts); none configured: local inputs only.
  fetch: planPolygonFetch,
  async plan(ctx) {
    const dir = path.join(ctx.inputDir, 'quotes');
    const fetched = new Map(ctx.fetches.flatMap((f) => f.outputs.map((o) => [o, f.key] as const)));
    const files = (await listInputs(dir, /\.(csv|json)$/i)).filter((f) => !fetched.has(f));
    // Incremental (jobs/quotes/quote-input-parts.ts): a file the planner reuses whose saved parts match it gets no
    // child; its parts are hard-linked into the run now. Any other file is parsed.
    let parse = (_f: string) => true;
    if (ctx.incremental) {
      const inc = ctx.incremental;
      await inc.partition(files);
      const current = await readCurrentManifest(ctx.config.dataDir, quotesDomain.domain);
      const reuse: Array<[string, string]> = [];
      let settled = inc.settle();
      for (const f of files) {
        if (settled.has(f)) continue;
        const entry = inc.entryOf(f)!;
        const saved = current
          ? await savedInputParts(ctx.config.dataDir, current.snapshot_id, path.relative(dir, f), {
              sha256: entry.sha256,
              sidecar_sha256: await sidecarSha256(f),
            })
          : null;
        if (saved) reuse.push([f, saved]);
        else inc.require([f]);
      }
      settled = inc.settle();
      for (const [f, saved] of reuse) if (!settled.has(f)) await linkInputParts(ctx.config.dataDir, ctx.runId, saved);
      parse = (f) => settled.has(f);
    }
    const children: ChildJob[] = files.filter(parse).map((f) => {
      const rel = path.relative(dir, f);
      return { step: f.toLowerCase().endsWith('.json') ? 'polygon' : 'csv', key: rel, data: { file: f, rel } };
    });
    // A fetched file is parsed by a polygon child that waits for its fetch job.
    for (const [f, key] of fetched)
      children.push({ step: 'polygon', key: path.relative(dir, f), data: { file: f, rel: path.relative(dir, f) }, after: [key] });
    return { inputDigest: await digestInputs(ctx.inputDir, files, 'quotes-v1'), children };
  },
  // Unchanged inputs are not parsed: their parts are reused from the current snapshot (see plan), never carried.
  incremental: { parser: QUOTES_PARSER, ownParts: true },
  steps: {
    csv: { payload: filePayload, process: processCsv },
    polygon: { payload: filePayload, process: processPolygon },
    [POLYGON_FETCH_STEP]: { payload: polygonFetchPayload, process: processPolygonFetch },
    [POLYGON_GROUPED_STEP]: { payload: polygonGroupedPayload, process: processPolygonGroupedFetch },
    [POLYGON_REFERENCE_STEP]: { payload: polygonReferencePayload, process: processPolygonReferenceFetch },
  },
  async derive(conn, ctx) {
    // Ordered CTAS: a plain scan of quote_chain_input returns fold order (the fold streams it; derive-bars joins by position).
    await conn.run('SET preserve_insertion_order = true');
    const t0 = Date.now();
    const mark = (what: string) => ctx.log.info({ ms: Date.now() - t0 }, `quotes derive: ${what}`);
    try {
      const folds = await chooseQuoteDerive(conn, ctx.run.dir);
      // quote_bars' files in table order (fast path); the general path writes one file (replaceParquetTable).
      let barFiles: string[] | null = null;
      // The chain heads' source on the fast path in key order: the children's tails parts (writeQuoteHeads).
      let tails: { files: string[]; chains: string[] } | null = null;
      mark(`plan: ${folds.fast ? 'per-file folds' : 'general'} (${folds.reason})`);
      if (folds.fast) {
        // Fast path: every chain lies in one file with one version per day, so the children's leaves are final.
        // Concatenated in key order, the parts ARE the table (same columns, rows, order): linked as its files.
        // Per-file chains whose key ranges overlap are sorted into one file per overlapping group (the groups are
        // disjoint and in key order, so their files in order are the table in key order). An incremental run reuses a
        // group's sorted file from the previous snapshot when every member was reused (quote-input-parts.ts).
        barFiles = folds.ordered
          ? folds.files
          : await sortedGroupFiles(conn, ctx.run.dir, ctx.previous?.snapshot_id ?? null, ctx.run.dataDir, folds.groups);
        await ctx.linkParquetTable('quote_bars', barFiles);
        mark('bars (from per-file folds)');
        // Every file's leaf keys, sorted per file by the child: linked as quote_leaf_keys' files.
        const keyFiles = folds.files.map((f) => path.join(path.dirname(path.dirname(f)), KEY_PARTS, path.basename(f)));
        await ctx.linkParquetTable('quote_leaf_keys', keyFiles);
        mark('leaf keys (per-file parts)');
        const sibling = (dir: string) => folds.files.map((f) => path.join(path.dirname(path.dirname(f)), dir, path.basename(f)));
        const tailFiles = sibling(TAIL_PARTS);
        if (folds.ordered && quoteHeadsOptions.fromTails && (await everyFileExists(tailFiles)))
          tails = { files: tailFiles, chains: sibling(CHAIN_PARTS) };
      } else {
        // The inputs again, from each file's bars part and its line side part (same row order: POSITIONAL JOIN).
        for (const f of folds.files) {
          const lines = path.join(path.dirname(path.dirname(f)), LINE_PARTS, path.basename(f));
          await conn.run(`INSERT INTO quote_bar_inputs BY NAME SELECT ${QUOTE_INPUT_COLUMNS.join(', ')}
            FROM (SELECT * EXCLUDE (flags, day_index, leaf_hash, leaf_key) FROM read_parquet(${quoteLiteral(f)})) POSITIONAL JOIN read_parquet(${quoteLiteral(lines)})`);
        }
        if (folds.files.length) mark('inputs from parts');
        await conn.run(loadSql('./derive-chain-input.sql', import.meta.url).replace('/*RECORD_JSON*/NULL', () => RECORD_JSON_SQL));
        mark('record hashes');
        const [{ dup }] = await queryRows(
          conn,
          `SELECT EXISTS (SELECT 1 FROM quote_hashed GROUP BY ticker, adjustment, quote_date HAVING count(*) > 1) AS dup`,
        );
        await conn.run(loadSql(dup ? './derive-chain-versions.sql' : './derive-chain-fast.sql', import.meta.url));
        await conn.run('DROP TABLE quote_hashed');
        mark(dup ? 'chain input (versions)' : 'chain input (fast path)');
        await queryRows(
          conn,
          `INSERT INTO rejects SELECT $run_id, dataset, file, line,
            'duplicate bar for ' || ticker || ' ' || CAST(quote_date AS VARCHAR) || ' (' || adjustment || '): same values already read', NULL
          FROM quote_duplicates`,
          { run_id: ctx.runId },
        );
        const scratch = path.join(ctx.run.dir, 'quote-leaf-hashes.csv');
        await foldQuoteChains(conn, scratch);
        await rm(scratch, { force: true });
        mark('fold');
        await ctx.replaceParquetTable(
          'quote_bars',
          loadSql('./derive-bars.sql', import.meta.url).replace('/*FLAGS*/NULL', () => FLAGS_SQL),
          { rowGroupSize: BAR_ROW_GROUP },
        );
        await ctx.replaceParquetTable(
          'quote_leaf_keys',
          `SELECT leaf_key, ticker, adjustment, quote_date FROM quote_bars ORDER BY leaf_key`,
          { rowGroupSize: KEY_ROW_GROUP },
        );
        mark('bars');
      }
      const prev = ctx.previousTable('quote_bars');
      // The history compares the previous and current chains. On an incremental run only the chains with a bar of a
      // file that was not reused (parsed by this run, or gone) can differ: a chain of reused files alone has the same
      // rows and leaves (its parts are the previous run's), so the scan is restricted to the others.
      const scope = prev ? await changedChainsScope(conn, ctx.run.dir, prev) : null;
      await conn.run(
        prev
          ? `CREATE OR REPLACE TEMP VIEW previous_quote_bars AS SELECT * FROM read_parquet(${quoteLiteral(prev)})${scope ?? ''}`
          : `CREATE OR REPLACE TEMP VIEW previous_quote_bars AS SELECT * FROM quote_bars LIMIT 0`,
      );
      await conn.run(`CREATE OR REPLACE TEMP VIEW current_quote_bars AS SELECT * FROM quote_bars${scope ?? ''}`);
      mark(`history scope: ${scope ? 'changed chains' : 'every chain'}`);
      const [superseded, gone] = loadSql('./derive-history.sql', import.meta.url).split('-- next statement');
      // Superseded versions within this run exist only on the general path (the fast path has one version per day).
      if (!folds.fast) await queryRows(conn, superseded, { run_id: ctx.runId });
      await queryRows(conn, gone, { run_id: ctx.runId });
      mark('history');
      // Splits applied to the raw bars and checked against the stored adjusted ones (quote_split_adjustments).
      await conn.run(loadSql('./derive-split-adjustments.sql', import.meta.url));
      mark(`split adjustments (${await fillServedLeafHashes(conn, ctx.run.dir)} stale days re-derived)`);
      mark(`chain heads (${(await writeQuoteHeads(conn, ctx, barFiles, tails)).records - 1} tickers${tails ? ', from tails' : ''})`);
      // Each published input's parts stay with the snapshot, for the next run to reuse (quote-input-parts.ts).
      mark(`input parts kept: ${await saveInputParts(ctx.run.dir)}`);
      await conn.run(
        folds.fast
          ? 'DROP VIEW previous_quote_bars; DROP VIEW current_quote_bars; DELETE FROM quote_bar_inputs;'
          : 'DROP VIEW previous_quote_bars; DROP VIEW current_quote_bars; DROP TABLE quote_leaf_hashes; DROP TABLE quote_chain_input; DROP TABLE quote_duplicates; DROP TABLE quote_fold_sources; DELETE FROM quote_bar_inputs;',
      );
    } finally {
      await conn.run('SET preserve_insertion_order = false');
    }
  },
};
