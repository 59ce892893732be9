/**
 * Answer schemas of the registry layers (/api/company/{ticker}/profile, /timeline, /filings, /earnings, /people,
 * /api/person/{name}, /api/signals): the OpenAPI components of their 200 bodies, checked against live answers by
 * test/api/openapi-conformance.test.ts (docs/architecture.md#openapi-and-docs). Field names and types are the served
 * ones (spec 000 tables, test/contract/spec-000.table.ts); nullable where the warehouse column is (jobs/registry/tables.sql).
 */
import { z } from 'zod';
import { limitClampedSchema, originLeafSchema, pageMembers } from '../platform/answer-schemas.ts';

const str = z.string();
const strN = z.string().nullable();
const num = z.number();

/** `companyHead` of registry-layers.queries.ts: the company every layer answer opens with. */
export const companyHeadMembers = {
  schema: z.literal('proofline/sec-company/v1'),
  ticker: str,
  name: str,
  cik: z.number().int(),
  status: z.enum(['active', 'acquired', 'delisted', 'inactive']).nullable(),
};
const layer = <N extends number>(n: N) => ({ layer: z.literal(n) });

/** A row's provenance (RowOrigins): `origin_leaf` (hash, default) or the whole leaf in `origin` (origins=full). */
const rowOrigin = { origin_leaf: z.string().nullable().optional(), origin: originLeafSchema.nullable().optional() };
const ORIGINS_NOTE = { origins_note: str.optional() };
const DETAIL_NOTE = { detail: str.optional().describe('what detail=full adds (absent with detail=full)') };

const metric = z.object({
  value: num,
  as_of: strN,
  unit: strN.optional().describe('detail=full'),
  concept: str.optional().describe('detail=full'),
  form: strN.optional().describe('detail=full'),
  filed: strN.optional().describe('detail=full'),
  accession: strN.optional().describe('detail=full'),
  is_amendment: z.boolean().nullable().optional().describe('detail=full'),
  ...rowOrigin,
});
const evidenced = { evidence: strN.optional().describe('detail=full'), accession: strN.optional().describe('detail=full'), ...rowOrigin };

export const profileAnswer = z.object({
  ...companyHeadMembers,
  ...layer(1),
  key_facts: z.object({
    employees: z.object({ value: num, ...evidenced }).nullable(),
    shares_outstanding: metric.nullable(),
    public_float: metric.nullable(),
    revenue: metric.nullable(),
    net_income: metric.nullable(),
  }),
  people: z.array(
    z.object({ name: str, role: str, role_type: str, since: strN, last_seen: strN.optional().describe('detail=full'), ...rowOrigin }),
  ),
  products: z.array(z.object({ name: str, ...evidenced })),
  partnerships: z.array(z.object({ partner: str, ...evidenced })),
  affiliations: z.array(
    z.object({
      person: str,
      company: strN,
      ticker: strN,
      role: str,
      role_type: str.optional().describe('detail=full'),
      last_seen: strN.optional().describe('detail=full'),
    }),
  ),
  totals: z.object({ people: z.number().int(), affiliations: z.number().int() }),
  ...DETAIL_NOTE,
  ...ORIGINS_NOTE,
  origin: originLeafSchema.nullable(),
});

export const timelineAnswer = z.object({
  ...companyHeadMembers,
  ...layer(2),
  counts: z.record(z.string(), z.number().int()).describe('events per event type'),
  events: z.array(
    z.object({
      date: strN,
      filing_date: strN,
      type: str.describe('event type, e.g. financial_results, leadership_change, acquisition, product_launch'),
      item: str,
      title: str,
      summary: strN,
      accession: str,
      form: strN,
      document_url: strN.optional().describe('detail=full'),
      basis: z.enum(['document', 'filing_index']),
      ...rowOrigin,
    }),
  ),
  ...DETAIL_NOTE,
  limit_clamped: limitClampedSchema,
  ...ORIGINS_NOTE,
  origin: originLeafSchema.nullable(),
  total: z.number().int().describe('events of the company in all pages'),
  ...pageMembers,
});

export const filingsAnswer = z.object({
  ...companyHeadMembers,
  ...layer(3),
  form: z.enum(['10-K', '10-Q', '8-K']).nullable(),
  total: z.number().int(),
  returned: z.number().int(),
  filings: z.array(
    z.object({
      accession: str,
      form: str,
      filing_date: str,
      report_date: strN,
      acceptance_datetime: strN,
      items: z.array(str).nullable(),
      primary_document: strN,
      document_url: strN,
      index_url: str,
      extraction_status: z.enum(['pending', 'extracted', 'failed', 'skipped']),
      extraction_reason: strN,
      listed_in: z.enum(['submissions', 'index']),
      origin: originLeafSchema.nullable(),
    }),
  ),
  limit_clamped: limitClampedSchema,
  origin: originLeafSchema.nullable(),
  ...pageMembers,
});

const earningsRow = z.object({
  date: str,
  confirmed: z.boolean(),
  timing: z.enum(['BMO', 'AMC', 'DMH', 'unknown']),
  timing_established: z.enum([
    'sgml_header',
    'acceptance_utc_proven',
    'acceptance_eastern_proven',
    'both_readings_agree',
    'uncertain',
    'unknown',
    'history',
  ]),
  acceptance_et: strN,
  timing_basis: strN,
  acceptance_check: z.enum(['agrees', 'disagrees']).nullable(),
  confidence: num,
  basis: strN,
  accession: strN,
  document_url: strN,
  origin: originLeafSchema.nullable(),
});
export const earningsAnswer = z.object({
  ...companyHeadMembers,
  timing_legend: z.record(z.string(), str),
  timing_established_legend: z.record(z.string(), str),
  predicted: z.array(earningsRow),
  confirmed: z.array(earningsRow),
  confirmed_total: z.number().int(),
  recent_8ks: z.array(
    z.object({
      accession: str,
      form: str,
      filing_date: str,
      items: z.array(str).nullable(),
      document_url: strN,
      index_url: str,
      origin: originLeafSchema.nullable(),
    }),
  ),
  origin: originLeafSchema.nullable(),
  limit_clamped: limitClampedSchema,
  ...pageMembers,
});

const alsoReportedAs = z.array(z.object({ name: str, role: str, accession: strN, source: str })).optional();
const personRow = z.object({
  name: str,
  role: str,
  role_type: z.enum(['officer', 'director', 'ten_percent_owner', 'other', 'executive_officer']),
  first_seen: strN,
  last_seen: strN,
  accession: strN,
  source: str,
  also_reported_as: alsoReportedAs,
  origin: originLeafSchema.nullable(),
});
export const peopleAnswer = z.object({
  ...companyHeadMembers,
  executives: z.array(personRow),
  board: z.array(personRow),
  owners: z.array(personRow),
  origin: originLeafSchema.nullable(),
  total: z.number().int().describe('roles in all three lists, over every page'),
  limit_clamped: limitClampedSchema,
  ...pageMembers,
});

export const personAnswer = z.object({
  schema: z.literal('proofline/sec-person/v1'),
  person: z.object({ name: str, cik: strN, notes: str }),
  career: z.array(
    z.object({
      company: strN,
      ticker: strN,
      cik: z.number().int().nullable(),
      role: str,
      role_type: str,
      period: str,
      period_detail: z.object({ from: strN, to: strN }),
      accession: strN,
      source: str,
      also_reported_as: alsoReportedAs,
      origin: originLeafSchema.nullable(),
    }),
  ),
  other_matches: z.array(z.object({ name: str, roles: z.number().int(), companies: z.array(str) })),
  origin: originLeafSchema.nullable(),
});

/** /api/signals: without any parameter the index of signal types; with any, a page of signals. */
export const signalsAnswer = z.union([
  z.object({
    schema: z.literal('proofline/sec-signals/v1'),
    strength_scale: z.record(z.string(), str),
    types: z.array(
      z.object({
        type: str,
        description: str,
        sections: z.array(str),
        hits: z.number().int(),
        companies: z.number().int(),
        avg_strength: num.nullable(),
        measured: z
          .object({ precision: num, recall: num, evaluated_hits: z.number().int(), as_of: str, method: str })
          .nullable()
          .optional(),
        example: strN,
      }),
    ),
    origin: originLeafSchema.nullable(),
  }),
  z.object({
    schema: z.literal('proofline/sec-signals/v1'),
    strength_scale: z.record(z.string(), str),
    query: z.object({
      ticker: strN,
      type: strN,
      exchange: strN,
      also: strN,
      min_strength: z.number().int().nullable(),
      limit: z.number().int(),
    }),
    total: z.number().int(),
    returned: z.number().int(),
    signals: z.array(
      z.object({
        ticker: strN,
        exchange: strN,
        cik: z.number().int().nullable(),
        company_name: strN,
        signal_type: str,
        strength: z.number().int(),
        section: str,
        evidence: str,
        accession: strN,
        filing_date: strN,
        pattern_id: str,
        origin: originLeafSchema.nullable(),
      }),
    ),
    limit_clamped: limitClampedSchema,
    origin: originLeafSchema.nullable(),
    ...pageMembers,
  }),
]);
