/**
 * The transcripts pipeline: earnings-call transcripts (PDF, EarningsCall JSON,
 * Motley-Fool JSON, markdown) into `transcripts`, `transcript_facts`,
 * `transcript_topics` and `transcript_call_dates`.
 *
 * Origin chain of a call (docs/quotes-and-transcripts.md):
 *   fetch leaf (kind `fetch`, from the IR client's `.meta.json` sidecar: URL, time, TLS certificate, addresses)
 *     → source leaf (kind `source`, SHA-256 of the PDF/JSON/markdown bytes; parent = fetch leaf or null)
 *       → extraction leaf (kind `extraction`, record = the JSON extraction) and markdown leaf (record = the markdown text)
 *         → fact leaves (kind `record`, parent = extraction leaf)
 *
 * Inputs under `<inputDir>/transcripts/`: `pdf/*.pdf`, `html/*.html` (IR pages), `earningscall/TICKER_YYYY_Qn.levelN*.json` (parts of one call
 * are merged; `TICKER.events.json` gives call dates), `motley/*.json`, `markdown/*.md`.
 */
import path from 'node:path';
import { z } from 'zod';
import { hashCanonical } from '../../lib/hash.ts';
import { createLeaf, createRecordLeaf, createSourceLeaf, type OriginLeaf } from '../../lib/origin.ts';
import { defineDomain } from '../../lib/warehouse/domain.ts';
import type { IngestedSource } from '../../lib/warehouse/staging.ts';
import {
  earningsCallFileKey,
  mergeEarningsCall,
  parseEarningsCallEvents,
  parseEarningsCallPart,
} from '../../ingest/transcripts/earningscall.ts';
import { buildExtraction, renderTranscriptMarkdown } from '../../ingest/transcripts/extract.ts';
import { parseMotleyTranscript } from '../../ingest/transcripts/motley.ts';
import { parseTranscriptHtml } from '../../ingest/transcripts/html-transcript.ts';
import { extractPdfPages } from '../../ingest/transcripts/pdf-text.ts';
import { parseTranscriptMarkdown, parseTranscriptText } from '../../ingest/transcripts/text-transcript.ts';
import type { ParsedTranscript } from '../../ingest/transcripts/transcript.schema.ts';
import { digestInputs, listInputs, readInput, type SourceMeta } from '../inputs.ts';
import type { ChildJob, Pipeline, StepContext, StepResult } from '../pipeline.ts';
import type { StagingRun } from '../../lib/warehouse/staging.ts';
import { IR_FETCH_STEP, irFetchPayload, planIrFetch, processIrFetch } from './ir-fetch.ts';
import { writeTranscriptsPacked } from './transcripts-packed.ts';

export const transcriptsDomain = defineDomain({
  domain: 'transcripts',
  tables: './tables.sql',
  indexes: './indexes.sql',
  base: import.meta.url,
  replaceTables: ['transcripts', 'transcript_facts', 'transcript_topics', 'transcript_call_dates'],
});

const filePayload = z.object({ file: z.string(), rel: z.string() });
const callPayload = z.object({ key: z.string(), files: z.array(z.string()).min(1), events: z.string().nullable() });

const NAME_HINT = /^([A-Z][A-Z0-9.\-]*)_(?:FY)?(\d{4})_?Q([1-4])/i;

/** Ticker, fiscal year and quarter from file names like `AAPL_2022Q1.pdf`, `AAPL_FY2022_Q1.md`. */
export function transcriptFileHint(name: string): { ticker: string; fiscal_year: number | null; fiscal_quarter: number | null } {
  const m = NAME_HINT.exec(name);
  if (m) return { ticker: m[1].toUpperCase(), fiscal_year: Number(m[2]), fiscal_quarter: Number(m[3]) };
  return { ticker: (name.split(/[_.]/)[0] ?? 'UNKNOWN').toUpperCase(), fiscal_year: null, fiscal_quarter: null };
}

/** The fetch leaf of a file fetched by the IR client (sidecar `fetch`), or null for local files. */
export function fetchLeafOf(meta: SourceMeta | null, contentSha256: string): { leaf: OriginLeaf; record: unknown } | null {
  const fetch = meta?.fetch as Record<string, unknown> | undefined;
  if (!fetch || typeof fetch !== 'object') return null;
  return {
    record: fetch,
    leaf: createLeaf({
      kind: 'fetch',
      source: 'ir-site',
      source_url: (meta?.source_url as string) ?? (fetch.url as string) ?? null,
      retrieved_at: (meta?.retrieved_at as string) ?? (fetch.fetched_at as string) ?? null,
      content_sha256: contentSha256,
      record_sha256: hashCanonical(fetch),
      parent: null,
    }),
  };
}

function transcriptKey(p: ParsedTranscript): string {
  return `${p.ticker}-FY${p.fiscal_year ?? 'x'}-Q${p.fiscal_quarter ?? 'x'}-${p.format}`;
}

/** Writes one call: source row+leaf (parented by the fetch leaf), extraction, markdown and fact leaves, rows. */
async function writeTranscript(
  run: StagingRun,
  parsed: ParsedTranscript,
  primary: IngestedSource,
  meta: SourceMeta | null,
  extra: IngestedSource[] = [],
): Promise<StepResult> {
  const fetched = fetchLeafOf(meta, primary.content_sha256);
  const sourceLeaf = createSourceLeaf(primary, fetched?.leaf.leaf_hash ?? null);
  const files = [primary, ...extra].map((s) => ({ path: s.source_url ?? path.basename(s.path ?? ''), content_sha256: s.content_sha256 }));
  if (extra.length)
    parsed.notes.push(`merged ${files.length} files: ${files.map((f) => `${f.path} (${f.content_sha256.slice(0, 12)})`).join(', ')}`);
  const extraction = buildExtraction(parsed);
  const markdown = renderTranscriptMarkdown(parsed, extraction);
  const base = {
    source_url: primary.source_url,
    retrieved_at: primary.retrieved_at,
    content_sha256: primary.content_sha256,
    parent: sourceLeaf.leaf_hash,
  };
  const jsonLeaf = createLeaf({
    kind: 'extraction',
    source: 'proofline/transcript-extraction',
    record_sha256: hashCanonical(extraction),
    ...base,
  });
  const mdLeaf = createLeaf({
    kind: 'extraction',
    source: 'proofline/transcript-markdown',
    record_sha256: hashCanonical(markdown),
    ...base,
  });
  const key = transcriptKey(parsed);
  const facts = extraction.facts.map((f) => {
    const record = { transcript_key: key, ...f };
    const leaf = createRecordLeaf(record, primary, { parent: jsonLeaf.leaf_hash });
    return {
      transcript_key: key,
      ticker: parsed.ticker,
      call_date: parsed.call_date,
      fiscal_year: parsed.fiscal_year,
      fiscal_quarter: parsed.fiscal_quarter,
      ...f,
      origin_leaf_hash: leaf.leaf_hash,
      origin: leaf,
      leaf,
    };
  });
  // JSON columns take the values themselves (the NDJSON part carries them as JSON).
  const json = (v: unknown) => v;
  await run.writeRows('transcripts', key, [
    {
      transcript_key: key,
      ticker: parsed.ticker,
      title: extraction.title,
      fiscal_year: parsed.fiscal_year,
      fiscal_quarter: parsed.fiscal_quarter,
      call_date: parsed.call_date,
      format: parsed.format,
      speakers: json(extraction.speakers),
      qa_present: extraction.qa.present,
      qa_questions: extraction.qa_questions,
      key_metrics: json(extraction.key_metrics),
      word_count: extraction.word_count,
      topics: json(extraction.topics),
      notes: json(extraction.notes),
      extraction: json(extraction),
      markdown,
      source_files: json(files),
      fetch_record: fetched ? json(fetched.record) : null,
      fetch_origin: fetched ? json(fetched.leaf) : null,
      source_origin: json(sourceLeaf),
      origin: json(jsonLeaf),
      markdown_origin: json(mdLeaf),
      origin_leaf_hash: jsonLeaf.leaf_hash,
    },
  ]);
  await run.writeRows(
    'transcript_facts',
    key,
    facts.map(({ leaf: _l, ...f }) => f),
  );
  await run.writeRows(
    'transcript_topics',
    key,
    Object.entries(extraction.topics).map(([topic, mentions]) => ({
      transcript_key: key,
      ticker: parsed.ticker,
      title: extraction.title,
      call_date: parsed.call_date,
      fiscal_year: parsed.fiscal_year,
      fiscal_quarter: parsed.fiscal_quarter,
      topic,
      mentions,
    })),
  );
  // sources rows (recordSource would make a parentless leaf: the PDF leaf here chains to its fetch).
  const now = new Date().toISOString();
  const srcRows = [primary, ...extra].map((s, i) => ({
    run_id: run.runId,
    dataset: s.source,
    path: s.path,
    source_url: s.source_url,
    byte_size: s.byte_size,
    content_sha256: s.content_sha256,
    retrieved_at: s.retrieved_at,
    ingested_at: now,
    leaf_hash: i === 0 ? sourceLeaf.leaf_hash : createSourceLeaf(s).leaf_hash,
    row_count: 1,
    reject_count: 0,
  }));
  await run.writeRows('sources', `src-${key}`, srcRows);
  const leaves = [
    ...(fetched ? [fetched.leaf] : []),
    sourceLeaf,
    ...extra.map((s) => createSourceLeaf(s)),
    jsonLeaf,
    mdLeaf,
    ...facts.map((f) => f.leaf),
  ];
  await run.writeLeaves(key, leaves, 'transcripts');
  return {
    rows: 1 + facts.length,
    rejects: 0,
    detail: { transcript_key: key, facts: facts.length, qa_questions: extraction.qa_questions },
  };
}

async function processPdf(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { bytes, src, meta } = await readInput(ctx.data.file, 'transcripts/pdf', null);
  const pages = await extractPdfPages(bytes, ctx.data.rel);
  const parsed = parseTranscriptText(pages, transcriptFileHint(path.basename(ctx.data.file)), 'pdf');
  return writeTranscript(ctx.run, parsed, src, meta);
}

async function processHtml(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { bytes, src, meta } = await readInput(ctx.data.file, 'transcripts/html', null);
  return writeTranscript(ctx.run, parseTranscriptHtml(bytes, ctx.data.rel, transcriptFileHint(path.basename(ctx.data.file))), src, meta);
}

async function processMotley(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { bytes, src, meta } = await readInput(ctx.data.file, 'transcripts/motley-json', null);
  return writeTranscript(ctx.run, parseMotleyTranscript(bytes, path.basename(ctx.data.file)), src, meta);
}

async function processMarkdown(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { bytes, src, meta } = await readInput(ctx.data.file, 'transcripts/markdown', null);
  return writeTranscript(
    ctx.run,
    parseTranscriptMarkdown(bytes.toString('utf8'), transcriptFileHint(path.basename(ctx.data.file))),
    src,
    meta,
  );
}

async function processEarningsCall(ctx: StepContext<z.infer<typeof callPayload>>): Promise<StepResult> {
  const inputs = [];
  for (const f of ctx.data.files) inputs.push({ f, ...(await readInput(f, 'earningscall/transcript', null)) });
  const parts = inputs.map((x) => parseEarningsCallPart(x.bytes, path.basename(x.f)));
  const parsed = mergeEarningsCall(parts);
  const extra: IngestedSource[] = inputs.slice(1).map((x) => x.src);
  if (!parsed.call_date && ctx.data.events) {
    const ev = await readInput(ctx.data.events, 'earningscall/events', null);
    const hit = parseEarningsCallEvents(ev.bytes, ctx.data.events).events.find(
      (e) => e.fiscal_year === parsed.fiscal_year && e.fiscal_quarter === parsed.fiscal_quarter,
    );
    if (hit) {
      parsed.call_date = hit.call_date;
      parsed.call_time = hit.call_time;
      parsed.notes.push(`call date from ${path.basename(ctx.data.events)}`);
      extra.push(ev.src);
    }
  }
  return writeTranscript(ctx.run, parsed, inputs[0].src, inputs[0].meta, extra);
}

async function processEvents(ctx: StepContext<z.infer<typeof filePayload>>): Promise<StepResult> {
  const { bytes, src } = await readInput(ctx.data.file, 'earningscall/events', null);
  const ticker = path.basename(ctx.data.file).split('.')[0].toUpperCase();
  const parsed = parseEarningsCallEvents(bytes, ctx.data.rel);
  const leaf = await ctx.run.recordSource(src, { rows: parsed.events.length }, ctx.data.rel);
  await ctx.run.writeRows(
    'transcript_call_dates',
    ctx.data.rel,
    parsed.events.map((e) => ({ ticker, company: parsed.company, ...e, origin_leaf_hash: leaf.leaf_hash })),
  );
  return { rows: parsed.events.length, rejects: 0 };
}

/**
 * Version of what the domain makes of its inputs: the plan digest's salt and the incremental ledger's parser. v2:
 * the snapshot carries the routes' packed stores (transcripts-packed.ts), so a warehouse published before is rebuilt.
 */
export const TRANSCRIPTS_PARSER = 'transcripts-v2';

export const transcriptsPipeline: Pipeline = {
  domain: transcriptsDomain,
  fetch: planIrFetch,
  // Every table is written by the children (none is derived from scratch); topics name no input and go with
  // their transcript. A changed file's duplicate of another input's call reappears only when that one is re-parsed.
  incremental: {
    parser: TRANSCRIPTS_PARSER,
    carryTables: ['transcripts', 'transcript_facts', 'transcript_topics', 'transcript_call_dates'],
    carryVia: { transcript_topics: { key: 'transcript_key', table: 'transcripts' } },
  },
  async plan(ctx) {
    const dir = path.join(ctx.inputDir, 'transcripts');
    const fetched = new Set(ctx.fetches.flatMap((f) => f.outputs));
    const all = await listInputs(dir);
    const files = all.filter((f) => !fetched.has(f));
    const children: ChildJob[] = [];
    // A PDF fetched by this run is parsed by the pdf child that waits for its fetch job.
    for (const f of ctx.fetches) {
      if (f.step !== IR_FETCH_STEP) continue;
      const out = f.outputs[0]!;
      const step = out.endsWith('.html') ? 'html' : 'pdf';
      children.push({ step, key: path.relative(dir, out), data: { file: out, rel: path.relative(dir, out) }, after: [f.key] });
    }
    const rejects: Array<{ file: string; reason: string }> = [];
    const calls = new Map<string, string[]>();
    const events = new Map<string, string>();
    const single: ChildJob[] = [];
    for (const f of files) {
      const rel = path.relative(dir, f);
      const name = path.basename(f);
      if (/\.pdf$/i.test(name)) single.push({ step: 'pdf', key: rel, data: { file: f, rel } });
      else if (/\.html?$/i.test(name)) single.push({ step: 'html', key: rel, data: { file: f, rel } });
      else if (/\.md$/i.test(name)) single.push({ step: 'markdown', key: rel, data: { file: f, rel } });
      else if (/^[A-Z][A-Z0-9.\-]*\.events\.json$/i.test(name)) {
        events.set(name.split('.')[0].toUpperCase(), f);
        single.push({ step: 'events', key: rel, data: { file: f, rel } });
      } else if (earningsCallFileKey(name)) {
        const k = earningsCallFileKey(name)!;
        const key = `${k.ticker}_${k.year}_Q${k.quarter}`;
        calls.set(key, [...(calls.get(key) ?? []), f]);
      } else if (/_q[1-4]_\d{4}\.json$/i.test(name)) single.push({ step: 'motley', key: rel, data: { file: f, rel } });
      else
        rejects.push({
          file: rel,
          reason:
            'not a transcript input (expected *.pdf, *.html, *.md, TICKER_YYYY_Qn.levelN.json, TICKER.events.json or TICKER_qN_YYYY.json)',
        });
    }
    const callChildren: ChildJob[] = [];
    for (const [key, fs] of calls) {
      const sorted = fs.sort((a, b) => path.basename(a).localeCompare(path.basename(b)));
      callChildren.push({ step: 'earningscall', key, data: { key, files: sorted, events: events.get(key.split('_')[0]) ?? null } });
    }
    // Incremental: a call's parts are parsed together, and with its ticker's events file (call dates) when that
    // changed or went; only children with an input to parse are planned.
    let parse = (_f: string) => true;
    if (ctx.incremental) {
      const inc = ctx.incremental;
      await inc.partition(files.filter((f) => !rejects.some((r) => r.file === path.relative(dir, f))));
      let changed = inc.settle();
      const prevEvents = new Set(
        inc
          .previousPaths()
          .filter((p) => /\.events\.json$/i.test(p))
          .map((p) => path.basename(p).split('.')[0].toUpperCase()),
      );
      for (const c of callChildren) {
        const d = c.data as z.infer<typeof callPayload>;
        const ticker = d.key.split('_')[0];
        const eventsMoved = d.events ? changed.has(d.events) : prevEvents.has(ticker);
        if (eventsMoved || d.files.some((f) => changed.has(f))) inc.require(d.files);
      }
      changed = inc.settle();
      parse = (f) => changed.has(f);
    }
    for (const c of single) if (parse((c.data as { file: string }).file)) children.push(c);
    for (const c of callChildren) if ((c.data as z.infer<typeof callPayload>).files.some(parse)) children.push(c);
    return { inputDigest: await digestInputs(ctx.inputDir, all, TRANSCRIPTS_PARSER), children, rejects };
  },
  steps: {
    pdf: { payload: filePayload, process: processPdf },
    html: { payload: filePayload, process: processHtml },
    motley: { payload: filePayload, process: processMotley },
    markdown: { payload: filePayload, process: processMarkdown },
    earningscall: { payload: callPayload, process: processEarningsCall },
    events: { payload: filePayload, process: processEvents },
    [IR_FETCH_STEP]: { payload: irFetchPayload, process: processIrFetch },
  },
  async derive(conn, ctx) {
    // One row per transcript key: two inputs for the same call and format keep the first (by title) deterministically.
    await conn.run(
      `CREATE OR REPLACE TABLE transcripts AS SELECT * FROM transcripts QUALIFY row_number() OVER (PARTITION BY transcript_key ORDER BY origin_leaf_hash) = 1 ORDER BY ticker, call_date`,
    );
    // The routes' packed stores (issue 22), from the deduplicated rows.
    await writeTranscriptsPacked(conn, ctx);
  },
};
