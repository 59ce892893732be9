/**
 * Registry layer steps: companyfacts → `company_facts`; filing documents
 * (8-K, 10-K, Forms 3/4/5) → `documents`, `doc_events`, `people_roles`,
 * `profile_facts`, `signals`; EDGAR index files → `index_entries`. Each row
 * carries an origin leaf on the exact EDGAR document (its Archives URL when
 * the CIK and accession are known) and the SHA-256 of the bytes read. A
 * document that fails to parse is recorded as `failed` with its reason and a
 * reject, and the rest of the batch lands.
 */
import path from 'node:path';
import { ParseError } from '../../lib/errors.ts';
import { hashCanonical } from '../../lib/hash.ts';
import { createRecordLeaf, type OriginLeaf } from '../../lib/origin.ts';
import type { IngestedSource } from '../../lib/warehouse/staging.ts';
import { filingDocumentUrl } from '../../ingest/edgar/cik.ts';
import { parseCompanyFacts } from '../../ingest/edgar/companyfacts.ts';
import { classifyDocument, pathHints } from '../../ingest/edgar/documents.ts';
import { parseEdgarIndex } from '../../ingest/edgar/edgar-index.ts';
import { isTimelineItem, parseEightK } from '../../ingest/edgar/eight-k.ts';
import { parseOwnership } from '../../ingest/edgar/ownership.ts';
import { detectSignals } from '../../ingest/edgar/signals.ts';
import { parseTenK } from '../../ingest/edgar/ten-k.ts';
import { readInput } from '../inputs.ts';
import { SourceBatch } from './source-batch.ts';
import type { StepContext, StepResult } from '../pipeline.ts';

export const COMPANYFACTS_RE = /(^|\/)CIK\d{10}\.json(\.gz)?$/;
/** Filing documents: htm/html/txt/xml/sgml, minus index pages, feeds and manifests (not documents of a filing). */
export const DOCUMENT_RE =
  /^(?!.*(?:-index\.html|-index-headers\.html|index-headers|index-pages|index-json|\/feeds\/|errors\/)).*\.(htm|html|txt|xml|sgml)$/i;
export const INDEX_RE = /\.idx(\.txt)?$/;

function partKey(files: string[]): string {
  return hashCanonical(files.map((f) => path.basename(f))).slice(0, 16);
}

function errReason(e: unknown): string {
  return e instanceof ParseError ? e.message : `unexpected: ${(e as Error).message}`;
}

/** companyfacts JSON (or .json.gz) → company_facts and company_share_counts. */
export async function processCompanyFacts(ctx: StepContext<{ files: string[] }>): Promise<StepResult> {
  const rows: object[] = [];
  const shareRows: object[] = [];
  const leaves: OriginLeaf[] = [];
  const sources = new SourceBatch(ctx.run);
  const rejectRows = [];
  let rejects = 0;
  for (const file of ctx.data.files) {
    const name = path.basename(file);
    const { bytes, src } = await readInput(
      file,
      'sec-edgar/companyfacts',
      `https://data.sec.gov/api/xbrl/companyfacts/${name.replace(/\.gz$/, '')}`,
    );
    try {
      const parsed = parseCompanyFacts(bytes, file);
      for (const m of parsed.metrics) {
        const leaf = createRecordLeaf(m, src);
        leaves.push(leaf);
        rows.push({ ...m, origin_leaf_hash: leaf.leaf_hash, origin: leaf });
      }
      // Shares outstanding per period end (market cap as of a quote date); the latest one's leaf equals the metric's.
      for (const h of parsed.share_history) {
        const leaf = createRecordLeaf(h, src);
        leaves.push(leaf);
        shareRows.push({
          cik: h.cik,
          taxonomy: h.taxonomy,
          concept: h.concept,
          value: h.value,
          period_end: h.period_end,
          accession: h.accession,
          form: h.form,
          filed: h.filed,
          is_amendment: h.is_amendment,
          is_fallback: h.is_fallback,
          origin_leaf_hash: leaf.leaf_hash,
          origin: leaf,
        });
      }
      sources.add(src, { rows: parsed.metrics.length });
    } catch (e) {
      rejects++;
      rejectRows.push({ dataset: src.source, file, line: null, reason: errReason(e), raw: null });
      sources.add(src, { rows: 0, rejects: 1 });
    }
  }
  const key = `facts-${partKey(ctx.data.files)}`;
  await ctx.run.writeRejects(key, rejectRows);
  await sources.flush(key);
  await ctx.run.writeRows('company_facts', key, rows);
  await ctx.run.writeRows('company_share_counts', key, shareRows);
  await ctx.run.writeLeaves(key, leaves, 'company_facts');
  return { rows: rows.length, rejects };
}

interface DocOut {
  documents: object[];
  doc_events: object[];
  people_roles: object[];
  profile_facts: object[];
  signals: object[];
  leaves: OriginLeaf[];
}

/** One document: classify, parse, and push its rows. Returns the status row fields. */
function extractDocument(
  bytes: Buffer,
  file: string,
  rel: string,
  src: IngestedSource,
  out: DocOut,
): {
  status: string;
  reason: string | null;
  cik: number | null;
  accession: string | null;
  form: string | null;
  kind: string;
  filing_date: string | null;
  acceptance_et: string | null;
} {
  const text = bytes.toString('utf8');
  const hints = pathHints(rel);
  const { kind, form } = classifyDocument(text);
  const sha = src.content_sha256;
  const docSrc = (cik: number | null, acc: string | null): IngestedSource =>
    src.retrieved_at || !cik || !acc ? src : { ...src, source_url: filingDocumentUrl(cik, acc, hints.document) };
  const push = (table: keyof Omit<DocOut, 'leaves' | 'documents'>, row: Record<string, unknown>, s: IngestedSource) => {
    const leaf = createRecordLeaf(row, s);
    out.leaves.push(leaf);
    out[table].push({ ...row, content_sha256: sha, origin_leaf_hash: leaf.leaf_hash, origin: leaf });
  };
  if (kind === '8-K') {
    const k = parseEightK(text, file, { cik: hints.cik, accession: hints.accession, filing_date: hints.date });
    const s = docSrc(k.cik, k.accession);
    for (const it of k.items) {
      if (!isTimelineItem(it.item)) continue;
      push(
        'doc_events',
        {
          cik: k.cik,
          accession: k.accession,
          form: k.form,
          item: it.item,
          original_item: it.original_item,
          event_type: it.event_type,
          title: it.title,
          summary: it.summary,
          event_date: k.event_date,
          filing_date: k.filing_date,
          acceptance_et: k.header?.acceptance_et ?? null,
        },
        s,
      );
    }
    return {
      status: 'extracted',
      reason: k.items.length ? null : 'no item headings found',
      cik: k.cik,
      accession: k.accession,
      form: k.form,
      kind,
      filing_date: k.filing_date,
      acceptance_et: k.header?.acceptance_et ?? null,
    };
  }
  if (kind === '10-K') {
    const t = parseTenK(text, file, { cik: hints.cik, accession: hints.accession });
    const s = docSrc(t.cik, t.accession);
    const base = { cik: t.cik, accession: t.accession };
    if (t.employees)
      push(
        'profile_facts',
        {
          ...base,
          fact_type: 'employees',
          value: String(t.employees.value),
          numeric_value: t.employees.value,
          evidence: t.employees.evidence,
          section: 'Item 1',
        },
        s,
      );
    for (const p of t.products)
      push(
        'profile_facts',
        { ...base, fact_type: 'product', value: p.value, numeric_value: null, evidence: p.evidence, section: 'Item 1' },
        s,
      );
    for (const p of t.partnerships)
      push(
        'profile_facts',
        { ...base, fact_type: 'partnership', value: p.value, numeric_value: null, evidence: p.evidence, section: 'Item 1' },
        s,
      );
    for (const x of t.executives) {
      push(
        'people_roles',
        {
          person_name: x.name,
          person_cik: null,
          cik: t.cik,
          issuer_name: null,
          issuer_ticker: null,
          role_type: 'executive_officer',
          role: x.title,
          age: x.age,
          as_of: hints.date,
          accession: t.accession,
          form: t.form,
          source_kind: '10-K',
        },
        s,
      );
    }
    for (const h of detectSignals(t.sections, { company: t.company_name })) push('signals', { ...base, ...h }, s);
    return {
      status: 'extracted',
      reason: null,
      cik: t.cik,
      accession: t.accession,
      form: t.form,
      kind,
      filing_date: hints.date,
      acceptance_et: null,
    };
  }
  if (kind === 'ownership') {
    const o = parseOwnership(text, file, { accession: hints.accession });
    const s = docSrc(o.roles[0]?.issuer_cik ?? hints.cik, o.accession);
    for (const r of o.roles) {
      push(
        'people_roles',
        {
          person_name: r.person_name,
          person_cik: r.person_cik,
          cik: r.issuer_cik,
          issuer_name: r.issuer_name,
          issuer_ticker: r.issuer_ticker,
          role_type: r.role_type,
          role: r.role,
          age: null,
          as_of: r.as_of,
          accession: o.accession,
          form: o.form,
          source_kind: 'ownership',
        },
        s,
      );
    }
    return {
      status: 'extracted',
      reason: o.roles.length ? null : 'no reporting owner with a role',
      cik: o.roles[0]?.issuer_cik ?? hints.cik,
      accession: o.accession,
      form: o.form,
      kind,
      filing_date: null,
      acceptance_et: o.acceptance_et,
    };
  }
  return {
    status: 'skipped',
    reason: `no extractor for form ${form ?? 'unknown'}`,
    cik: hints.cik,
    accession: hints.accession,
    form,
    kind,
    filing_date: null,
    acceptance_et: null,
  };
}

/** A batch of filing documents → documents (status), doc_events, people_roles, profile_facts, signals. */
export async function processDocuments(ctx: StepContext<{ files: string[]; root: string }>): Promise<StepResult> {
  const out: DocOut = { documents: [], doc_events: [], people_roles: [], profile_facts: [], signals: [], leaves: [] };
  const rejects = [];
  const sources = new SourceBatch(ctx.run);
  let i = 0;
  for (const file of ctx.data.files) {
    const rel = path.relative(ctx.data.root, file);
    const { bytes, src } = await readInput(file, 'sec-edgar/filing-document');
    const hints = pathHints(rel);
    let r: ReturnType<typeof extractDocument>;
    try {
      r = extractDocument(bytes, file, rel, src, out);
    } catch (e) {
      r = {
        status: 'failed',
        reason: errReason(e),
        cik: hints.cik,
        accession: hints.accession,
        form: null,
        kind: classifyDocument(bytes.toString('utf8')).kind,
        filing_date: null,
        acceptance_et: null,
      };
      rejects.push({ dataset: src.source, file: rel, line: null, reason: r.reason!, raw: null });
    }
    const source_url = src.source_url ?? (r.cik && r.accession ? filingDocumentUrl(r.cik, r.accession, hints.document) : null);
    const row = {
      cik: r.cik,
      accession: r.accession,
      form: r.form,
      document: hints.document,
      doc_kind: r.kind,
      date_hint: hints.date,
      filing_date: r.filing_date,
      acceptance_et: r.acceptance_et,
      status: r.status,
      reason: r.reason,
      source_url,
    };
    const leaf = createRecordLeaf(row, { ...src, source_url });
    out.leaves.push(leaf);
    out.documents.push({ ...row, content_sha256: src.content_sha256, origin_leaf_hash: leaf.leaf_hash, origin: leaf });
    sources.add({ ...src, source_url }, { rows: 1, rejects: r.status === 'failed' ? 1 : 0 });
    if (++i % 25 === 0) await ctx.progress(i, ctx.data.files.length);
  }
  const key = `docs-${partKey(ctx.data.files)}`;
  for (const t of ['documents', 'doc_events', 'people_roles', 'profile_facts', 'signals'] as const) await ctx.run.writeRows(t, key, out[t]);
  await ctx.run.writeLeaves(key, out.leaves, 'documents');
  await ctx.run.writeRejects(key, rejects);
  await sources.flush(key);
  const rows = out.documents.length + out.doc_events.length + out.people_roles.length + out.profile_facts.length + out.signals.length;
  return {
    rows,
    rejects: rejects.length,
    detail: {
      documents: out.documents.length,
      events: out.doc_events.length,
      people: out.people_roles.length,
      signals: out.signals.length,
    },
  };
}

/** One EDGAR index file → index_entries; malformed rows and empty files become rejects with file and reason. */
export async function processIndex(ctx: StepContext<{ file: string; root: string }>): Promise<StepResult> {
  const { file } = ctx.data;
  const rel = path.relative(ctx.data.root, file);
  const m = /(\d{4})(\d{2})(\d{2})/.exec(path.basename(file));
  const q = m ? Math.ceil(Number(m[2]) / 3) : null;
  const canonical = m
    ? `https://www.sec.gov/Archives/edgar/daily-index/${m[1]}/QTR${q}/${path.basename(file).replace(/\.sample|\.txt$/g, '')}`
    : null;
  const { bytes, src } = await readInput(file, 'sec-edgar/index', canonical);
  const key = `index-${rel}`;
  try {
    const parsed = parseEdgarIndex(bytes, rel);
    const leaf = createRecordLeaf({ index_file: rel, rows: parsed.rows.length }, src);
    const rows = parsed.rows.map((r) => ({ ...r, index_file: rel, origin_leaf_hash: leaf.leaf_hash }));
    await ctx.run.writeRows('index_entries', key, rows);
    await ctx.run.writeLeaves(key, [leaf], 'index_entries');
    await ctx.run.writeRejects(
      key,
      parsed.rejects.map((r) => ({ dataset: src.source, file: rel, line: r.line, reason: r.reason, raw: r.raw })),
    );
    await ctx.run.recordSource(src, { rows: rows.length, rejects: parsed.rejects.length }, key);
    return { rows: rows.length, rejects: parsed.rejects.length, detail: { kind: parsed.kind } };
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    await ctx.run.writeRejects(key, [
      { dataset: src.source, file: rel, line: (e.context.line as number | undefined) ?? null, reason: e.message, raw: null },
    ]);
    await ctx.run.recordSource(src, { rows: 0, rejects: 1 }, key);
    return { rows: 0, rejects: 1, detail: { rejected: e.message } };
  }
}
