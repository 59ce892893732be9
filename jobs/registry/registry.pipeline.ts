/**
 * The registry (SEC EDGAR) pipeline: ticker files and submissions JSON into
 * `ticker_snapshots`, `companies` and `filings`, each row with an origin leaf
 * pointing at the exact EDGAR document and the SHA-256 of the bytes read; at
 * publish, `company_lookup` (ticker → CIK, status).
 *
 * Inputs under `<inputDir>/sec/`: `tickers/*.json`, `submissions/CIK*.json`.
 * With an EDGAR source configured (EDGAR_FETCH_*, jobs/registry/registry-fetch.ts)
 * a run first fetches submissions/companyfacts/tickers into that folder: each
 * parse child of fetched files waits for its fetch jobs (publish ← parse ← fetch).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { createRecordLeaf, type OriginLeaf } from '../../lib/origin.ts';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import { defineDomain } from '../../lib/warehouse/domain.ts';
import { submissionsUrl } from '../../ingest/edgar/cik.ts';
import { deriveAfterLookup, deriveLayers, deriveRegistryDelta } from './registry-layers.derive.ts';
import { COMPANYFACTS_RE, DOCUMENT_RE, INDEX_RE, processCompanyFacts, processDocuments, processIndex } from './registry-layers.steps.ts';
import { isOverflowPage, parseFilingPage, parseSubmissions } from '../../ingest/edgar/submissions.ts';
import { parseTickers, tickerSnapshotDate } from '../../ingest/edgar/tickers.ts';
import { hashCanonical } from '../../lib/hash.ts';
import { ParseError } from '../../lib/errors.ts';
import { describeError } from '../in-process.ts';
import { readInput } from '../inputs.ts';
import type { BaseContext, ChildJob, FetchJob, Pipeline, StepContext, StepResult } from '../pipeline.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import { writeSignalsPacked } from './signals-packed.ts';
import { notePeopleBeforeDelta, writeRegistryPacked } from './registry-packed.ts';
import type { Reject } from '../../lib/warehouse/staging.ts';
import { SourceBatch } from './source-batch.ts';
import { digestScanned, scanInputs } from './scan-inputs.ts';
import { EDGAR_FETCH_STEP, edgarFetchPayload, planEdgarFetch, processEdgarFetch, type EdgarFetchPayload } from './registry-fetch.ts';
import { NotFoundError } from '../../lib/errors.ts';

export const registryDomain = defineDomain({
  domain: 'registry',
  tables: './tables.sql',
  indexes: './indexes.sql',
  base: import.meta.url,
  replaceTables: ['company_lookup', 'timeline', 'earnings_calendar', 'filing_index', 'people', 'signal_hits'],
});

/** Submissions files per child job: bounded memory, parallel across workers. */
export const SUBMISSIONS_BATCH = 250;
/** Filing documents per child job (10-Ks are up to a few MB each). */
export const DOCUMENTS_BATCH = 1000;
/** Fetched complete submissions per child job (a 10-K's complete submission, exhibits included, can be tens of MB). */
export const FETCHED_DOCUMENTS_BATCH = 200;

/** `fetched`: the files were planned as outputs of fetch jobs; one the source did not have (404, removed) is skipped. */
const tickersPayload = z.object({
  file: z.string(),
  snapshot_date: z.string().nullable(),
  is_current: z.boolean(),
  fetched: z.boolean().optional(),
});
const submissionsPayload = z.object({ files: z.array(z.string()).min(1), fetched: z.boolean().optional() });
const factsPayload = z.object({ files: z.array(z.string()).min(1), fetched: z.boolean().optional() });

/**
 * Wraps a batch step: for fetched inputs, drops the files the fetch jobs found missing at the
 * source (404: no file), so the batch parses what EDGAR has; an all-missing batch is empty.
 */
function skipMissingFetched<P extends { files: string[]; fetched?: boolean }>(process: (ctx: StepContext<P>) => Promise<StepResult>) {
  return async (ctx: StepContext<P>): Promise<StepResult> => {
    if (!ctx.data.fetched) return process(ctx);
    const files = ctx.data.files.filter((f) => existsSync(f));
    if (!files.length) return { rows: 0, rejects: 0, detail: { missing_at_source: ctx.data.files.length } };
    const r = await process({ ...ctx, data: { ...ctx.data, files } });
    return files.length === ctx.data.files.length
      ? r
      : { ...r, detail: { ...r.detail, missing_at_source: ctx.data.files.length - files.length } };
  };
}

const TICKER_URLS: Record<string, string> = {
  'company_tickers_exchange.json': 'https://www.sec.gov/files/company_tickers_exchange.json',
  'company_tickers.json': 'https://www.sec.gov/files/company_tickers.json',
};

async function processTickers(ctx: StepContext<z.infer<typeof tickersPayload>>): Promise<StepResult> {
  const { file, snapshot_date, is_current } = ctx.data;
  const name = path.basename(file);
  if (ctx.data.fetched && !existsSync(file))
    throw new NotFoundError(`the fetched ticker file ${name} is missing (the source answered 404)`, { file });
  const { bytes, src } = await readInput(file, 'sec-edgar/tickers', TICKER_URLS[name] ?? null);
  const parsed = parseTickers(bytes, file);
  const rows = parsed.rows.map((r) => ({
    ...r,
    snapshot_date,
    is_current,
    file_format: parsed.format,
    content_sha256: src.content_sha256,
  }));
  await ctx.run.writeRows('ticker_snapshots', name, rows);
  await ctx.run.writeRejects(
    name,
    parsed.rejects.map((r) => ({ dataset: src.source, file, line: r.line, reason: `${r.pointer ?? ''} ${r.reason}`.trim(), raw: r.raw })),
  );
  await ctx.run.recordSource(src, { rows: rows.length, rejects: parsed.rejects.length });
  return { rows: rows.length, rejects: parsed.rejects.length, detail: { format: parsed.format } };
}

async function processSubmissions(ctx: StepContext<z.infer<typeof submissionsPayload>>): Promise<StepResult> {
  const companies: object[] = [];
  const filings: object[] = [];
  const leaves: OriginLeaf[] = [];
  const sources = new SourceBatch(ctx.run);
  const rejectRows: Reject[] = [];
  let rejects = 0;
  let i = 0;
  for (const file of ctx.data.files) {
    const name = path.basename(file);
    const { bytes, src } = await readInput(file, 'sec-edgar/submissions', `https://data.sec.gov/submissions/${name}`);
    let parsedPage: ReturnType<typeof parseFilingPage> | null;
    let parsed: ReturnType<typeof parseSubmissions> | null;
    try {
      parsedPage = isOverflowPage(name) ? parseFilingPage(bytes, file) : null;
      parsed = parsedPage ? null : parseSubmissions(bytes, file);
    } catch (err) {
      // One malformed file is a file-level reject; the rest of the batch still lands.
      if (!(err instanceof ParseError)) throw err;
      rejects++;
      rejectRows.push({ dataset: src.source, file, line: (err.context.line as number) ?? null, reason: describeError(err), raw: null });
      sources.add(src, { rows: 0, rejects: 1 });
      ++i;
      continue;
    }
    if (parsed) {
      const leaf = createRecordLeaf(parsed.company, { ...src, source_url: src.source_url ?? submissionsUrl(parsed.company.cik) });
      leaves.push(leaf);
      companies.push({ ...parsed.company, origin_leaf_hash: leaf.leaf_hash, origin: leaf });
    }
    const fRows = parsed?.filings ?? parsedPage!.filings;
    for (const f of fRows) {
      const leaf = createRecordLeaf(f, src);
      leaves.push(leaf);
      filings.push({ ...f, origin_leaf_hash: leaf.leaf_hash });
    }
    const rj = parsed?.rejects ?? parsedPage!.rejects;
    rejects += rj.length;
    rejectRows.push(
      ...rj.map((r) => ({ dataset: src.source, file, line: r.line, reason: `${r.pointer ?? ''} ${r.reason}`.trim(), raw: r.raw })),
    );
    sources.add(src, { rows: fRows.length + (parsed ? 1 : 0), rejects: rj.length });
    if (++i % 25 === 0) await ctx.progress(i, ctx.data.files.length);
  }
  const key = batchKey(ctx.data.files);
  await ctx.run.writeRejects(key, rejectRows);
  await sources.flush(key);
  await ctx.run.writeRows('companies', key, companies);
  await ctx.run.writeRows('filings', key, filings);
  await ctx.run.writeLeaves(key, leaves, 'companies+filings');
  return { rows: companies.length + filings.length, rejects, detail: { companies: companies.length, filings: filings.length } };
}

/** Deterministic part key of a batch of files. */
export function batchKey(files: string[]): string {
  return `batch-${path.basename(files[0])}-${hashCanonical(files.map((f) => path.basename(f))).slice(0, 12)}`;
}

/**
 * Parse children of the fetch jobs: one child per fetched ticker file, and the
 * fetched submissions / companyfacts in batches of about SUBMISSIONS_BATCH
 * files, each child naming the fetch jobs that write its files (`after`).
 */
function fetchedChildren(fetches: FetchJob[], secDir: string): ChildJob[] {
  const children: ChildJob[] = [];
  const groups: Record<'submissions' | 'companyfacts' | 'filings', FetchJob[][]> = { submissions: [], companyfacts: [], filings: [] };
  for (const f of fetches) {
    if (f.step !== EDGAR_FETCH_STEP) continue;
    const { kind } = f.data as EdgarFetchPayload;
    if (kind === 'tickers') {
      children.push({
        step: 'tickers',
        key: path.basename(f.outputs[0]!),
        data: { file: f.outputs[0]!, snapshot_date: null, is_current: true, fetched: true },
        required: true,
        after: [f.key],
      });
      continue;
    }
    const list = groups[kind];
    const last = list.at(-1);
    const cap = kind === 'filings' ? FETCHED_DOCUMENTS_BATCH : SUBMISSIONS_BATCH;
    if (last && last.reduce((n, j) => n + j.outputs.length, 0) + f.outputs.length <= cap) last.push(f);
    else list.push([f]);
  }
  for (const group of groups.submissions) {
    const files = group.flatMap((f) => f.outputs);
    children.push({
      step: 'submissions',
      key: `fetched-${batchKey(files)}`,
      data: { files, fetched: true },
      after: group.map((f) => f.key),
    });
  }
  for (const group of groups.companyfacts) {
    const files = group.flatMap((f) => f.outputs);
    children.push({
      step: 'companyfacts',
      key: `facts-fetched-${batchKey(files)}`,
      data: { files, fetched: true },
      after: group.map((f) => f.key),
    });
  }
  // Complete submissions from the daily index (8-K, 10-K, Forms 3/4/5 ...): parsed by the documents step.
  for (const group of groups.filings) {
    const files = group.flatMap((f) => f.outputs);
    children.push({
      step: 'documents',
      key: `docs-fetched-${batchKey(files)}`,
      data: { files, root: secDir, fetched: true },
      after: group.map((f) => f.key),
    });
  }
  return children;
}

/**
 * Version of what the registry makes of its inputs: the plan digest's salt and the incremental ledger's parser (see
 * plan). v5: the packed identity stores (registry_identity, registry_tickers), the packed registry_signals store
 * (signals-packed.ts) and the leaf store /api/verify reads (lib/warehouse/publish.ts writeLeafStore) are new, so an
 * unchanged warehouse is published again to have them; v6: all three together (each branch had named its own v5).
 */
export const REGISTRY_PARSER = 'registry-v6';

export const registryPipeline: Pipeline = {
  domain: registryDomain,
  fetch: planEdgarFetch,
  // Delta publish keyed by CIK: a night re-derives only the companies whose inputs changed (deriveRegistryDelta).
  incremental: { parser: REGISTRY_PARSER, deltaKey: 'cik' },
  async plan(ctx) {
    const secDir = path.join(ctx.inputDir, 'sec');
    // Files the fetch jobs will (re)write are read by the children that wait for them, never as local inputs.
    const fetched = new Set(ctx.fetches.flatMap((f) => f.outputs));
    const local = (files: string[]) => (fetched.size ? files.filter((f) => !fetched.has(f)) : files);
    const tickerFiles = local(await scanInputs(path.join(secDir, 'tickers'), /\.json$/));
    const subFiles = local(await scanInputs(path.join(secDir, 'submissions'), /^CIK\d{10}(-submissions-\d{3})?\.json$/));
    const factFiles = local(await scanInputs(path.join(secDir, 'companyfacts'), COMPANYFACTS_RE));
    const docFiles = local([
      ...(await scanInputs(path.join(secDir, 'filings'), DOCUMENT_RE)),
      ...(await scanInputs(path.join(secDir, 'ownership'), DOCUMENT_RE)),
    ]);
    const indexFiles = await scanInputs(path.join(secDir, 'index'), INDEX_RE);
    const all = [...tickerFiles, ...subFiles, ...factFiles, ...docFiles, ...indexFiles];
    // Incremental: only new and changed inputs get children; publish carries the rows of the others.
    let parse = (_f: string) => true;
    if (ctx.incremental) {
      await ctx.incremental.partition(all);
      const changed = ctx.incremental.settle();
      parse = (f) => changed.has(f);
    }
    const children: ChildJob[] = fetchedChildren(ctx.fetches, secDir);
    for (const f of tickerFiles.filter(parse)) {
      const name = path.basename(f);
      const dated = tickerSnapshotDate(name, '');
      children.push({
        step: 'tickers',
        key: name,
        data: { file: f, snapshot_date: dated || null, is_current: !dated },
        required: !dated && name === 'company_tickers_exchange.json',
      });
    }
    // Keep a CIK's main file and its overflow pages in one batch.
    const byCik = new Map<string, string[]>();
    for (const f of subFiles.filter(parse)) {
      const cik = path.basename(f).slice(3, 13);
      byCik.set(cik, [...(byCik.get(cik) ?? []), f]);
    }
    let batch: string[] = [];
    for (const files of byCik.values()) {
      batch.push(...files);
      if (batch.length >= SUBMISSIONS_BATCH) {
        children.push({ step: 'submissions', key: batchKey(batch), data: { files: batch } });
        batch = [];
      }
    }
    if (batch.length) children.push({ step: 'submissions', key: batchKey(batch), data: { files: batch } });
    // Layers: companyfacts, filing documents (8-K, 10-K, ownership) and EDGAR index files.
    const factParse = factFiles.filter(parse);
    for (let i = 0; i < factParse.length; i += SUBMISSIONS_BATCH) {
      const files = factParse.slice(i, i + SUBMISSIONS_BATCH);
      children.push({ step: 'companyfacts', key: `facts-${batchKey(files)}`, data: { files } });
    }
    const docParse = docFiles.filter(parse);
    for (let i = 0; i < docParse.length; i += DOCUMENTS_BATCH) {
      const files = docParse.slice(i, i + DOCUMENTS_BATCH);
      children.push({ step: 'documents', key: `docs-${batchKey(files)}`, data: { files, root: secDir } });
    }
    for (const f of indexFiles.filter(parse))
      children.push({ step: 'index', key: `index-${path.relative(secDir, f)}`, data: { file: f, root: secDir } });
    // The salt versions what the pipeline makes of the inputs: bump it when parsing or derive SQL changes, so a
    // snapshot built by older code is rebuilt on the next run instead of skipped as unchanged (v3: 10-K executive
    // names linked to the company's Form 3/4/5 filers in derive-people-signals.sql; v4: the per-company packed stores of registry-packed.ts; v5: the identity and ticker stores
    // registry_identity / registry_tickers of the identity card and the quote routes).
    const known = ctx.incremental ? (f: string) => ctx.incremental!.statOf(f) : undefined;
    return { inputDigest: await digestScanned(ctx.inputDir, all, REGISTRY_PARSER, known), children };
  },
  steps: {
    tickers: { payload: tickersPayload, process: processTickers },
    submissions: { payload: submissionsPayload, process: skipMissingFetched(processSubmissions) },
    companyfacts: { payload: factsPayload, process: skipMissingFetched(processCompanyFacts) },
    documents: {
      payload: z.object({ files: z.array(z.string()).min(1), root: z.string(), fetched: z.boolean().optional() }),
      process: skipMissingFetched(processDocuments),
    },
    index: { payload: z.object({ file: z.string(), root: z.string() }), process: processIndex },
    [EDGAR_FETCH_STEP]: { payload: edgarFetchPayload, process: processEdgarFetch, rateLimited: 'sec' },
  },
  async derive(conn, ctx) {
    if (ctx.delta) {
      await notePeopleBeforeDelta(conn);
      await deriveRegistryDelta(conn, ctx.delta);
      await packRegistry(conn, ctx);
      return;
    }
    // A CIK can appear in two batches only through a malformed input set; keep one row per CIK and filing.
    await conn.run(
      `CREATE OR REPLACE TABLE companies AS SELECT * FROM companies QUALIFY row_number() OVER (PARTITION BY cik ORDER BY name) = 1`,
    );
    await conn.run(
      `CREATE OR REPLACE TABLE filings AS SELECT * FROM filings QUALIFY row_number() OVER (PARTITION BY cik, accession ORDER BY filing_date) = 1`,
    );
    await deriveLayers(conn);
    await conn.run(loadSql('./derive-lookup.sql', import.meta.url));
    await deriveAfterLookup(conn);
    await packRegistry(conn, ctx);
  },
};

/** The per-company packed stores the company routes read (registry-packed.ts), after the derived tables are final. */
async function packRegistry(conn: DuckDBConnection, ctx: DeriveContext & BaseContext): Promise<void> {
  const t = Date.now();
  const timings = await writeRegistryPacked(conn, ctx);
  const s = Date.now();
  await writeSignalsPacked(conn, ctx);
  timings.registry_signals = Date.now() - s;
  ctx.log.info({ domain: 'registry', ms: Date.now() - t, timings }, 'wrote the per-company packed stores');
}
