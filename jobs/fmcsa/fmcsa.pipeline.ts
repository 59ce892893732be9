/**
 * The FMCSA pipeline: every bulk file under `<inputDir>/fmcsa/` (any folder,
 * recognised by its header row, `.csv`/`.txt`, or a `.zip` of them such as the
 * SMS download) is one child job that DuckDB loads straight into a parquet
 * part; at publish the risk snapshot (`carrier_risk`, one row per carrier) and
 * `dataset_status` are derived in SQL (derive-*.sql + the rule table of
 * ingest/fmcsa/risk-model.ts compiled to SQL).
 *
 * Every table is replaced by every run: the FMCSA files are full extracts, so
 * a run is the whole picture as of its files (a missing file means "no data",
 * never last month's rows passed off as current).
 *
 * Incremental (issue 18, item 6; lib/warehouse/incremental.ts, part reuse): a
 * file whose SHA-256 and FMCSA_PARSER equal the current snapshot's ledger entry
 * gets no child; its parts (one per table it fills, plus its rejects) are
 * hard-linked from the previous snapshot into the run, and publish derives
 * every carrier table from old and new parts alike, so the snapshot is the one
 * a full run over the same files gives. A removed file's parts are not linked:
 * its rows are gone.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { Unzip, UnzipInflate } from 'fflate';
import { z } from 'zod';
import { ParseError } from '../../lib/errors.ts';
import { loadSql, queryRows, quoteIdentifier, quoteLiteral } from '../../lib/warehouse/duckdb.ts';
import { defineDomain } from '../../lib/warehouse/domain.ts';
import type { Reject } from '../../lib/warehouse/staging.ts';
import { detectFormat, FORMATS, type FmcsaKind } from '../../ingest/fmcsa/formats.ts';
import { basicsOverThresholdSql, RISK_RULES, riskScoreSelectSql } from '../../ingest/fmcsa/risk-model.ts';
import { CARRIER_SEARCH_ROW, SEARCH_ROW_CENSUS_COLUMNS, SEARCH_ROW_RISK_COLUMNS } from '../../ingest/fmcsa/search-store-keys.ts';
import { hashCanonical } from '../../lib/hash.ts';
import { describeInput, digestInputs, listInputs, readFirstLine } from '../inputs.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import type { ChildJob, Pipeline, StepContext, StepResult } from '../pipeline.ts';
import { READERS, readerSelectSql } from './readers.ts';
import {
  CARRIER_NAME_INDEX_STAMP,
  CARRIER_NAME_INDEX_TABLES,
  deriveCarrierNameIndex,
  linkPreviousCarrierNameIndex,
} from './carrier-name-index.ts';
import { deriveServingStores } from './serving-stores.ts';
import { writeRedFlagStores } from './red-flag-store.ts';
import { CARRIER_BY_DOCKET, DOCKET_STORE_STAMP, writeDocketStore } from './docket-store.ts';
import { FMCSA_FETCH_STEP, fmcsaFetchPayload, planFmcsaFetch, processFmcsaFetch } from './fmcsa-fetch.ts';

const FMCSA_TABLES = [
  'carriers',
  'crashes',
  'inspections',
  'inspection_units',
  'violations',
  'sms_basics',
  'revocations',
  'authority',
  'insurance',
  'oos_orders',
  'enforcement_cases',
  'carrier_risk',
  'carrier_snapshot_columns',
  ...CARRIER_NAME_INDEX_TABLES,
  'dataset_status',
];

/**
 * The big tables are parquet-only: each file's part (typed, in DDL column
 * order) IS the published table file; publish never copies them into
 * serving.duckdb, derive and readers use views over the parquet. The derived
 * carrier_risk is parquet-only too (written once by COPY: persisting 4.4 M rows
 * of ~90 columns into DuckDB and exporting them again cost more than the score
 * itself); per-carrier reads of it go to the packed store. Only the small
 * tables, carrier_snapshot_columns and dataset_status live in serving.duckdb. Parts keep the file's row order, not sorted by DOT: at
 * 4.4 M rows a sort under the 1 GB memory limit spills and costs more than
 * the parse; a per-DOT read of these tables scans the dot_number column (row
 * groups whose min/max exclude the DOT are skipped, which for a file in DOT
 * order such as the census is nearly all of them).
 */
const FMCSA_PARQUET_TABLES = ['carriers', 'crashes', 'inspections', 'inspection_units', 'violations', 'carrier_risk'];

export const fmcsaDomain = defineDomain({
  domain: 'fmcsa',
  tables: './tables.sql',
  indexes: './indexes.sql',
  base: import.meta.url,
  replaceTables: FMCSA_TABLES,
  parquetTables: [...FMCSA_PARQUET_TABLES, ...CARRIER_NAME_INDEX_TABLES],
});

/** Rejects kept per file (the count is always exact; the rows beyond this are summarised). */
const MAX_REJECT_ROWS = 10_000;

/** `kind`/`columns` null: read from the file's header when the child runs (a zip, or a file fetched by this run). */
const filePayload = z.object({
  file: z.string(),
  kind: z.string().nullable(),
  columns: z.array(z.string()).nullable(),
  fetched: z.boolean().optional(),
  /** The file relative to the run's input directory ('/'-separated): the ledger path its parts are recorded under. */
  rel: z.string().optional(),
});

/**
 * Version of what the FMCSA steps make of a file: the incremental ledger's parser and the input digest's salt.
 * Bump it when readers.ts, formats.ts or tables.sql change what a file's parts hold, so no part written by older
 * code is reused, and when a packed store's file format changes (the census store and the per-carrier stores of
 * serving-stores.ts are linked from the previous snapshot while their files are unchanged; a change of the census
 * store's SELECT or of the name index SQL is caught by the stamps of DERIVED_FROM_FILE instead) (v2: parts recorded
 * per file for incremental runs; v3: the per-carrier stores of serving-stores.ts changed format while they were
 * introduced; v4: the search routes' packed stores (red-flag lists, name search lists) are new, so a warehouse whose
 * inputs did not change is published again to have them; v5: the red_flag_rows and red_flag_index tables are no
 * longer published, the packed red-flag stores alone serve the route).
 */
export const FMCSA_PARSER = 'fmcsa-v5';

/**
 * Streams the data members of a zip (ReadMe files skipped) to `dir`, bounded
 * memory: DuckDB has no zip reader (shared notes, tech.md).
 */
export async function unzipMembers(zipFile: string, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const out: string[] = [];
  const pending: Promise<void>[] = [];
  const unzip = new Unzip((member) => {
    const base = path.basename(member.name);
    if (member.name.endsWith('/') || /readme/i.test(base) || !/\.(txt|csv)$/i.test(base)) return;
    const target = path.join(dir, base);
    out.push(target);
    const ws = createWriteStream(target);
    pending.push(
      new Promise<void>((resolve, reject) => {
        ws.on('error', reject);
        member.ondata = (err, chunk, final) => {
          if (err) return reject(err);
          ws.write(chunk);
          if (final) ws.end(() => resolve());
        };
        member.start();
      }),
    );
  });
  unzip.register(UnzipInflate);
  for await (const chunk of createReadStream(zipFile, { highWaterMark: 1 << 20 })) {
    unzip.push(chunk as Uint8Array);
    // Let file streams flush between chunks so a 45 MB member never sits in memory.
    await new Promise((r) => setImmediate(r));
  }
  unzip.push(new Uint8Array(0), true);
  await Promise.all(pending);
  return out;
}

interface LoadResult {
  rows: number;
  rejects: number;
  table: string;
}

/** Loads one recognised CSV file into a part of its table; rejects with file, line and reason. */
async function loadFile(
  ctx: StepContext,
  file: string,
  displayName: string,
  kind: FmcsaKind,
  columns: string[],
  partKey: string,
): Promise<LoadResult> {
  const spec = FORMATS.find((f) => f.kind === kind)!;
  const target = ctx.run.partPath(spec.table, partKey);
  await mkdir(path.dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}.tmp`;
  const rjTable = `rj_${hashCanonical([ctx.runId, partKey]).slice(0, 16)}`;
  // The part is the final table file (parquet-only tables): exactly the DDL's columns, order and types.
  const ddl = await ctx.run.tableColumns(spec.table);
  const { rows, rejects, sample } = await ctx.run.withScratch(async (conn) => {
    await conn.run(`SET threads = ${Math.max(1, ctx.config.DUCKDB_THREADS)}`);
    await conn.run(`SET preserve_insertion_order = false`);
    const select = readerSelectSql(kind, file, columns, rjTable, displayName);
    const produced = new Set([...Object.keys(READERS[kind].select), ...Object.keys(READERS[kind].constants ?? {}), 'source_file']);
    const projection = [...ddl]
      .map(([c, t]) => `${produced.has(c) ? `CAST(${quoteIdentifier(c)} AS ${t})` : `CAST(NULL AS ${t})`} AS ${quoteIdentifier(c)}`)
      .join(', ');
    const res = await conn.runAndReadAll(
      `COPY (SELECT ${projection} FROM (${select})) TO ${quoteLiteral(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
    );
    const written = Number(res.getRows()[0]?.[0] ?? 0);
    const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM ${rjTable}`);
    const sample = await queryRows(
      conn,
      `SELECT line::BIGINT AS line, error_type::VARCHAR AS error_type, column_name, error_message, csv_line FROM ${rjTable} ORDER BY line LIMIT ${MAX_REJECT_ROWS}`,
    );
    await conn.run(`DROP TABLE IF EXISTS ${rjTable}; DROP TABLE IF EXISTS ${rjTable}_scan`);
    return { rows: written, rejects: Number(n), sample };
  });
  await rename(tmp, target);
  const rj: Reject[] = sample.map((r) => ({
    dataset: spec.dataset,
    file: displayName,
    line: Number(r.line),
    reason: `${r.error_type}${r.column_name ? ` in ${r.column_name}` : ''}: ${String(r.error_message ?? '').trim() || 'invalid value'}`,
    raw: r.csv_line == null ? null : String(r.csv_line).slice(0, 2000),
  }));
  await ctx.run.writeRejects(partKey, rj);
  return { rows, rejects, table: spec.table };
}

async function processFile(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { file } = ctx.data;
  const name = path.basename(file);
  const members: Array<{ path: string; name: string; kind: FmcsaKind; columns: string[] }> = [];
  let scratchDir: string | null = null;
  if (/\.zip$/i.test(file)) {
    scratchDir = path.join(ctx.run.dir, 'unzip', hashCanonical(file).slice(0, 12));
    for (const m of await unzipMembers(file, scratchDir)) {
      const det = detectFormat(await readFirstLine(m));
      if (!det) throw new ParseError(`${path.basename(m)} in ${name} has an unrecognised header`, { file, line: 1 });
      members.push({ path: m, name: `${name}!${path.basename(m)}`, kind: det.spec.kind, columns: det.columns });
    }
    if (members.length === 0) throw new ParseError(`${name} contains no data file`, { file });
  } else {
    const det = ctx.data.kind && ctx.data.columns ? null : detectFormat(await readFirstLine(file));
    const kind = (ctx.data.kind as FmcsaKind | null) ?? det?.spec.kind ?? null;
    const columns = ctx.data.columns ?? det?.columns ?? null;
    if (!kind || !columns) throw new ParseError(`${name}: unrecognised header`, { file, line: 1 });
    members.push({ path: file, name, kind, columns });
  }
  try {
    // Hash the bytes (Node, main thread) while DuckDB parses them (its own threads): one overlapped pass.
    const spec = FORMATS.find((f) => f.kind === members[0].kind)!;
    const srcP = describeInput(file, spec.dataset, spec.url);
    srcP.catch(() => undefined);
    let rows = 0;
    let rejects = 0;
    const detail: Record<string, unknown> = {};
    const parts: Array<{ table: string; key: string }> = [];
    for (const m of members) {
      const t = Date.now();
      const partKey = `${m.kind}-${path.basename(m.path)}`;
      const r = await loadFile(ctx, m.path, m.name, m.kind, m.columns, partKey);
      parts.push({ table: r.table, key: partKey }, { table: 'rejects', key: `rejects-${partKey}` });
      rows += r.rows;
      rejects += r.rejects;
      detail[m.name] = { kind: m.kind, table: r.table, rows: r.rows, rejects: r.rejects, ms: Date.now() - t };
    }
    const src = await srcP;
    await ctx.run.recordSource(src, { rows, rejects }, `${members[0].kind}-${path.basename(file)}`);
    // Incremental runs: the next run links these parts instead of parsing the same bytes again.
    if (ctx.data.rel) await ctx.run.recordInputParts({ path: ctx.data.rel, sha256: src.content_sha256, bytes: src.byte_size }, parts);
    return { rows, rejects, detail };
  } finally {
    if (scratchDir) await rm(scratchDir, { recursive: true, force: true });
  }
}

/** JSON types of `getRowObjectsJson` that `json_array` renders the same way; BIGINT/DECIMAL (strings there) are cast. */
const JSON_SAME = /^(INTEGER|SMALLINT|TINYINT|VARCHAR|BOOLEAN|DATE)$/;
const JSON_AS_TEXT = /^(BIGINT|UBIGINT|HUGEINT|DECIMAL\(\d+,\d+\))$/;

/**
 * Each census column's value expression in the packed stores, in `carriers` column order (source_file and
 * content_sha256 left out): the value as the API's row reader gives it (BIGINT and DECIMAL as strings). Null when a
 * column has a type whose JSON would differ (the routes then read the parquet).
 */
async function censusValueExprs(conn: DuckDBConnection): Promise<Map<string, string> | null> {
  const cols = await queryRows(
    conn,
    `SELECT column_name, column_type FROM (DESCRIBE SELECT * EXCLUDE (source_file, content_sha256) FROM carriers)`,
  );
  const exprs = new Map<string, string>();
  for (const c of cols) {
    const q = quoteIdentifier(String(c.column_name));
    const t = String(c.column_type);
    if (JSON_SAME.test(t)) exprs.set(String(c.column_name), q);
    else if (JSON_AS_TEXT.test(t)) exprs.set(String(c.column_name), `${q}::VARCHAR`);
    else return null;
  }
  return exprs;
}

/**
 * The packed carrier_census store's select: per DOT, the JSON array of the carriers row without source_file and
 * content_sha256, in table column order, each value as `censusValueExprs` gives it.
 */
function censusPackedSelect(exprs: ReadonlyMap<string, string>): string {
  return `SELECT dot_number, json_array(${[...exprs.values()].join(', ')})::VARCHAR AS v FROM carriers`;
}

/**
 * The packed carrier_search_row store's select (ingest/fmcsa/search-store-keys.ts): per carrier, its search row's
 * census values as the census store writes them and its risk values as the snapshot store writes them (null
 * without a carrier_risk row, as the search's LEFT JOIN gives). Null when a column is missing from either table:
 * the search then reads both stores.
 */
function searchRowPackedSelect(exprs: ReadonlyMap<string, string>, riskColumns: readonly string[]): string | null {
  const census = SEARCH_ROW_CENSUS_COLUMNS.map(([, col]) => exprs.get(col));
  if (census.some((e) => e === undefined) || SEARCH_ROW_RISK_COLUMNS.some((c) => !riskColumns.includes(c))) return null;
  const values = [...census.map((e) => `c.${e}`), ...SEARCH_ROW_RISK_COLUMNS.map((c) => `r.${quoteIdentifier(c)}`)];
  return `SELECT c.dot_number, json_array(${values.join(', ')})::VARCHAR AS v FROM carriers c LEFT JOIN carrier_risk r USING (dot_number)`;
}

/**
 * Derived products that are functions of the carriers rows alone (the packed census store, the carrier name index)
 * are kept from the previous snapshot when its carriers parts are this run's (`samePartsAsPrevious`: every census
 * file reused) and it was derived the same way: each snapshot records, in this file, a stamp of how each such
 * product was computed (its SQL), and a product is linked only when the previous snapshot's stamp equals this
 * run's. A snapshot without the file (older code) has every product derived again.
 */
const DERIVED_FROM_FILE = 'derived-from.json';

async function previousStamps(ctx: DeriveContext): Promise<Record<string, string>> {
  if (!ctx.previous) return {};
  const file = path.join(snapshotDir(ctx.run.dataDir, ctx.run.domain, ctx.previous.snapshot_id), DERIVED_FROM_FILE);
  try {
    return z.record(z.string(), z.string()).parse(JSON.parse(await readFile(file, 'utf8')));
  } catch {
    return {};
  }
}

/** Milliseconds per derive step of the last publish in this process (reported by bench/fmcsa.bench.ts). */
export let lastDeriveTimings: Record<string, number> = {};
/**
 * CPU milliseconds of the process (DuckDB's threads included) per derive step of the last publish: on a shared
 * machine a steadier measure of a step's work than its wall time.
 */
export let lastDeriveCpuMs: Record<string, number> = {};

/** A path relative to the input directory as the incremental ledger writes it ('/'-separated). */
const ledgerPath = (inputDir: string, file: string) => path.relative(inputDir, file).split(path.sep).join('/');

export const fmcsaPipeline: Pipeline = {
  domain: fmcsaDomain,
  fetch: planFmcsaFetch,
  // Part reuse: an unchanged file's parts are linked from the previous snapshot; derive runs over all parts.
  incremental: { parser: FMCSA_PARSER, reuseParts: true },
  async plan(ctx) {
    const dir = path.join(ctx.inputDir, 'fmcsa');
    // Files this run downloads are read by the child that waits for their fetch job, never as local inputs.
    const fetched = new Set(ctx.fetches.flatMap((f) => f.outputs));
    const all = await listInputs(dir, /\.(csv|txt|zip)$/i);
    const files = all.filter((f) => !fetched.has(f));
    const children: ChildJob[] = [];
    // A fetched dataset is required: a download that failed or was rejected fails the run, so the published
    // snapshot never loses a dataset to a bad night (FMCSA files are full extracts: a missing one means no data).
    for (const f of ctx.fetches) {
      if (f.step !== FMCSA_FETCH_STEP) continue;
      children.push({
        step: 'file',
        key: path.relative(dir, f.outputs[0]!),
        data: { file: f.outputs[0]!, kind: null, columns: null, fetched: true, rel: ledgerPath(ctx.inputDir, f.outputs[0]!) },
        required: true,
        after: [f.key],
      });
    }
    const rejects: Array<{ file: string; reason: string }> = [];
    const local: ChildJob[] = [];
    for (const f of files) {
      const rel = path.relative(dir, f);
      if (/\.zip$/i.test(f)) {
        local.push({ step: 'file', key: rel, data: { file: f, kind: null, columns: null, rel: ledgerPath(ctx.inputDir, f) } });
        continue;
      }
      const det = detectFormat(await readFirstLine(f));
      if (!det) {
        // ReadMe and dictionary text files are documentation, not data.
        if (!/readme|dictionary|definition/i.test(rel))
          rejects.push({ file: rel, reason: 'unrecognised header: not an FMCSA bulk file format Proofline reads' });
        continue;
      }
      local.push({
        step: 'file',
        key: rel,
        data: { file: f, kind: det.spec.kind, columns: det.columns, rel: ledgerPath(ctx.inputDir, f) },
        required: det.spec.kind === 'company_census',
      });
    }
    // Incremental: only new and changed data files get a child; the parts of the others are linked at plan
    // (lib/warehouse/incremental.ts). Files with no recognised header are in no ledger: they are rejected each run.
    if (ctx.incremental) {
      const inputOf = (c: ChildJob) => (c.data as { file: string }).file;
      await ctx.incremental.partition(local.map(inputOf));
      const changed = ctx.incremental.settle();
      children.push(...local.filter((c) => changed.has(inputOf(c))));
    } else children.push(...local);
    return { inputDigest: await digestInputs(ctx.inputDir, all, FMCSA_PARSER), children, rejects };
  },
  steps: {
    file: { payload: filePayload, process: processFile },
    [FMCSA_FETCH_STEP]: { payload: fmcsaFetchPayload, process: processFmcsaFetch },
  },
  async derive(conn, ctx) {
    const t0 = Date.now();
    const timings: Record<string, number> = {};
    const cpuMs: Record<string, number> = {};
    const cpu0 = process.cpuUsage();
    const step = async (name: string, fn: () => Promise<unknown>) => {
      const t = Date.now();
      const cpu = process.cpuUsage();
      await fn();
      timings[name] = Date.now() - t;
      const u = process.cpuUsage(cpu);
      cpuMs[name] = Math.round((u.user + u.system) / 1000);
    };
    await conn.run(`SET threads = ${Math.max(1, ctx.config.DUCKDB_THREADS)}`);
    // A DOT in both census formats keeps the Company Census row (147 columns, status and rating included).
    const [{ dups }] = await queryRows(conn, `SELECT (count(*) - count(DISTINCT dot_number))::BIGINT AS dups FROM carriers`);
    if (Number(dups) > 0)
      await step('carriers', () => ctx.replaceParquetTable('carriers', loadSql('./derive-carriers.sql', import.meta.url)));
    await step('features', () =>
      conn.run(loadSql('./derive-risk-features.sql', import.meta.url).replace('/*BASICS_OVER_THRESHOLD*/0', basicsOverThresholdSql())),
    );
    await step('score', () => ctx.replaceParquetTable('carrier_risk', riskScoreSelectSql('carrier_risk_features'), { columns: 'query' }));
    await conn.run(`DROP VIEW carrier_risk_features`);
    const cols = (await queryRows(conn, `DESCRIBE SELECT * FROM carrier_risk`)).map((r) => String(r.column_name));
    // The snapshot endpoint's row, packed once: one JSON array per carrier in carrier_risk column order, served by DOT without DuckDB.
    await step('snapshot_packed', () =>
      ctx.writePacked(
        'carrier_snapshot',
        `SELECT dot_number, json_array(${cols.map(quoteIdentifier).join(', ')})::VARCHAR AS v FROM carrier_risk`,
      ),
    );
    await conn.run(
      `CREATE OR REPLACE TABLE carrier_snapshot_columns AS SELECT * FROM (VALUES ${cols.map((c, i) => `(${i}, ${quoteLiteral(c)})`).join(', ')}) t(pos, name)`,
    );
    // The identity endpoint's census row, packed the same way: a point read of the 44-column carriers parquet
    // decodes whole row groups (tens of ms); the packed read costs microseconds (issue 22).
    const censusExprs = await censusValueExprs(conn);
    const census = censusExprs && censusPackedSelect(censusExprs);
    // Part reuse: when every census file was reused, the carriers rows (deduplicated the same way) are the previous
    // snapshot's, and so are the products derived from them alone: linked, not derived again, when the previous
    // snapshot computed them the same way (DERIVED_FROM_FILE).
    const stamps: Record<string, string> = { carrier_name_index: CARRIER_NAME_INDEX_STAMP };
    if (census) stamps.carrier_census = hashCanonical({ select: census, format: 'packed-store' });
    const prevStamps = await previousStamps(ctx);
    const sameCarriers = await ctx.samePartsAsPrevious('carriers');
    const keep = (name: string) => sameCarriers && prevStamps[name] !== undefined && prevStamps[name] === stamps[name];
    if (census) {
      if (keep('carrier_census') && (await ctx.linkPreviousPacked('carrier_census'))) timings.census_packed_linked = 1;
      else await step('census_packed', () => ctx.writePacked('carrier_census', census));
    }
    // A search page's rows, one short record each (issue 22): written every run, as the snapshot store is.
    const searchRow = censusExprs && searchRowPackedSelect(censusExprs, cols);
    if (searchRow) await step('search_row_packed', () => ctx.writePacked(CARRIER_SEARCH_ROW, searchRow));
    stamps[CARRIER_BY_DOCKET] = DOCKET_STORE_STAMP;
    if (keep(CARRIER_BY_DOCKET) && (await ctx.linkPreviousPacked(CARRIER_BY_DOCKET))) timings.docket_packed_linked = 1;
    else await step('docket_packed', () => writeDocketStore(conn, ctx));
    await step('red_flag_rows', () => conn.run(loadSql('./derive-red-flag-rows.sql', import.meta.url)));
    // The red-flag lists per filter, packed: a page is a few positioned reads, no DuckDB query (issue 22).
    await step('red_flag_packed', () =>
      writeRedFlagStores(
        conn,
        ctx,
        RISK_RULES.map((r) => r.code),
      ),
    );
    await conn.run('DROP TABLE red_flag_rows');
    if (keep('carrier_name_index') && (await linkPreviousCarrierNameIndex(ctx))) timings.name_index_linked = 1;
    else await step('name_index', () => deriveCarrierNameIndex(ctx, conn, step));
    // The crash and inspection routes' per-DOT (and per-VIN) answers, packed (issue 22; linked when unchanged).
    for (const g of await deriveServingStores(conn, ctx, step)) timings[`${g}_linked`] = 1;
    await writeFile(path.join(ctx.run.dir, DERIVED_FROM_FILE), `${JSON.stringify(stamps, null, 2)}\n`);
    await step('dataset_status', () => conn.run(loadSql('./derive-dataset-status.sql', import.meta.url)));
    lastDeriveTimings = { total: Date.now() - t0, ...timings };
    const cpuAll = process.cpuUsage(cpu0);
    lastDeriveCpuMs = { total: Math.round((cpuAll.user + cpuAll.system) / 1000), ...cpuMs };
    ctx.log.info({ domain: 'fmcsa', ms: Date.now() - t0, timings }, 'derived carrier_risk and dataset_status');
  },
};
