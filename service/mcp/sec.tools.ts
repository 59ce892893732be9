/**
 * The registry tools (issue 23): one `sec_*` tool per registry read, each
 * calling the same transport-free query function as its REST route, so an
 * answer carries the same `origin` leaves (verifiable with `sec_verify`).
 * Fields without a value are omitted (tool-kit.ts); everything else is the
 * REST body.
 */
import { withMembers } from '../../lib/objects.ts';
import { z } from 'zod';
import {
  FACT_TOPICS,
  FACT_TYPES,
  FACTS_MAX,
  getCompanyFacts,
  getCompanyTranscripts,
  searchTranscripts,
  TRANSCRIPT_SEARCH_CATEGORIES,
} from '../transcripts/transcripts.queries.ts';
import { getIdentityCard } from '../company/company.queries.ts';
import { readerFor, type ServiceDeps } from '../platform/deps.ts';
import { getLatestQuote, getQuoteHistory, HISTORY_DEFAULT, HISTORY_MAX } from '../quotes/quotes.queries.ts';
import { verifyLeafHash } from '../receipts/receipts.queries.ts';
import {
  FILING_FORMS,
  getCompanyEarnings,
  getCompanyFilings,
  getCompanyPeople,
  getCompanyProfile,
  getCompanyTimeline,
  getPerson,
  listSignals,
  SIGNAL_TYPES,
} from '../registry-layers/registry-layers.queries.ts';
import { SEARCH_CATEGORIES, searchRegistry } from '../search/search.queries.ts';
import { bool, cikOut, int, num, obj, originLeaf, originRef, READ_ONLY, receipt, row, str, tickerArg, type ToolDef } from './tool-kit.ts';

const reg = (deps: ServiceDeps) => readerFor(deps, 'registry');
const quoteDeps = (deps: ServiceDeps) => ({ quotes: readerFor(deps, 'quotes'), registry: deps.readers.registry });
const transcriptDeps = (deps: ServiceDeps) => ({ transcripts: readerFor(deps, 'transcripts'), registry: deps.readers.registry });
const asRecord = (v: unknown) => v as Record<string, unknown>;

const originsArg = z
  .enum(['hash', 'full'])
  .optional()
  .describe(
    'row provenance: hash (default) gives each row an origin_leaf hash to pass to sec_verify; full gives each row its whole origin leaf',
  );
const signalType = z.enum(SIGNAL_TYPES as [string, ...string[]]);
const factType = z.enum(FACT_TYPES).optional().describe('fact kind: metric, guidance or strategy');
const factTopic = z
  .enum(FACT_TOPICS as [string, ...string[]])
  .optional()
  .describe('topic the fact is about');
const adjustment = z
  .enum(['raw', 'split_dividend'])
  .optional()
  .describe('price series: raw (as traded) or split_dividend (adjusted); default: the series with the newest bar');

/** The `cursor` argument of every paged tool (platform/pagination.ts) and the `next_cursor` it answers. */
const pageCursor = z.string().max(200).optional().describe('next_cursor of the previous page (opaque)');
const nextCursorOut = str.optional().describe('cursor of the next page; absent on the last page');

/** The head of every company answer. */
const companyHead = { schema: str, ticker: str, name: str, cik: cikOut, status: str };
const leafRef = z.string().describe('origin_leaf: hash of this row’s origin leaf (sec_verify it)');
const sourceRow = { accession: str, origin_leaf: leafRef.optional(), origin: originLeaf.optional() };

export const SEC_TOOLS: ToolDef[] = [
  {
    name: 'sec_company',
    title: 'Company identity card',
    description:
      "A company's identity card (layer 0, about 200 tokens): name, CIK, ticker, exchange, industry, headquarters, status, employees, with its origin leaf. Same as GET /api/company/{ticker}.",
    input: z.strictObject({
      ticker: tickerArg,
      detail: z
        .enum(['default', 'full'])
        .optional()
        .describe(
          'default: the ~200-token card with a short origin {leaf_hash, source}; full: also cik_padded, fiscal_year_end, status_reason, the market-cap basis and the whole origin leaf',
        ),
    }),
    output: obj({
      schema: str,
      layer: int,
      identity: obj({
        name: str,
        cik: z.string().regex(/^\d+$/),
        cik_padded: str.optional(),
        ticker: str,
        exchange: str.optional(),
        sic: str.optional(),
        sic_description: str.optional(),
        state_of_incorporation: str.optional(),
        headquarters: str.optional(),
        fiscal_year_end: str.optional(),
        status: str,
        status_reason: str.optional(),
      }),
      summary: str,
      peak_metrics: obj({ market_cap_usd: num.optional(), employees: int.optional() }),
      tags: z.array(str),
      deeper: obj({ profile: str, timeline: str, filings: str }),
      origin: originRef.optional(),
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => getIdentityCard(reg(deps), deps.readers.quotes, a.ticker, deps.options.publicBaseUrl, a.detail),
  },
  {
    name: 'sec_profile',
    title: 'Company profile',
    description:
      'Layer 1 profile (about 800 tokens): key facts (employees, shares, revenue, net income), people, products, partnerships and affiliations, each row with its origin. Same as GET /api/company/{ticker}/profile.',
    input: z.strictObject({ ticker: tickerArg, origins: originsArg }),
    output: obj({
      ...companyHead,
      layer: int,
      key_facts: z.record(z.string(), obj({ value: num, origin_leaf: leafRef.optional(), origin: originLeaf.optional() })),
      people: z.array(obj({ name: str, role: str.optional(), role_type: str.optional() })),
      products: z.array(obj({ name: str })),
      partnerships: z.array(obj({ partner: str })),
      affiliations: z.array(obj({ person: str, company: str })),
      origins_note: str.optional(),
      origin: originLeaf.optional(),
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getCompanyProfile(reg(deps), a.ticker, { origins: a.origins })),
  },
  {
    name: 'sec_timeline',
    title: 'Company timeline',
    description:
      'Layer 2 timeline (about 2,000 tokens): acquisitions, product launches, leadership changes and financial milestones from 8-K filings, newest first, each with its origin. Same as GET /api/company/{ticker}/timeline.',
    input: z.strictObject({
      ticker: tickerArg,
      limit: z.number().int().min(1).max(200).optional().describe('events to return, newest first (default 20, max 200)'),
      cursor: pageCursor,
      origins: originsArg,
    }),
    output: obj({
      ...companyHead,
      layer: int,
      counts: z.record(z.string(), int),
      events: z.array(obj({ date: str.optional(), type: str, title: str, ...sourceRow })),
      origins_note: str.optional(),
      origin: originLeaf.optional(),
      total: int,
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) =>
      asRecord(await getCompanyTimeline(reg(deps), a.ticker, { limit: a.limit, cursor: a.cursor, origins: a.origins })),
  },
  {
    name: 'sec_filings',
    title: 'Company filings',
    description:
      'Layer 3 filings: accession, form, filing and report dates, EDGAR document URLs and extraction status, each with its origin leaf; filter by form. Same as GET /api/company/{ticker}/filings.',
    input: z.strictObject({
      ticker: tickerArg,
      form: z.enum(FILING_FORMS).optional().describe('only this form (amendments included); default: every form'),
      limit: z.number().int().min(1).max(1000).optional().describe('filings to return, newest first (default 100, max 1000)'),
      cursor: pageCursor,
    }),
    output: obj({
      ...companyHead,
      layer: int,
      form: str.optional(),
      total: int,
      returned: int,
      filings: z.array(obj({ accession: str, form: str, filing_date: str, document_url: str.optional(), origin: originLeaf })),
      origin: originLeaf.optional(),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getCompanyFilings(reg(deps), a.ticker, { form: a.form, limit: a.limit, cursor: a.cursor })),
  },
  {
    name: 'sec_earnings',
    title: 'Earnings dates',
    description:
      'Confirmed earnings dates (from 8-K Item 2.02, with before/after-market timing and how it was established), predicted next dates with confidence, and recent 8-Ks. Same as GET /api/company/{ticker}/earnings.',
    input: z.strictObject({
      ticker: tickerArg,
      limit: z.number().int().min(1).max(200).optional().describe('confirmed dates to return, newest first (default 12, max 200)'),
      cursor: pageCursor,
    }),
    output: obj({
      ...companyHead,
      timing_legend: z.record(z.string(), str),
      timing_established_legend: z.record(z.string(), str),
      predicted: z.array(obj({ date: str, confirmed: bool, timing: str, confidence: num, basis: str })),
      confirmed: z.array(obj({ date: str, confirmed: bool, timing: str, accession: str, origin: originLeaf })),
      confirmed_total: int,
      recent_8ks: z.array(obj({ accession: str, form: str, filing_date: str, items: z.array(str), origin: originLeaf })),
      origin: originLeaf.optional(),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getCompanyEarnings(reg(deps), a.ticker, { limit: a.limit, cursor: a.cursor })),
  },
  {
    name: 'sec_people',
    title: 'Executives and board',
    description:
      "A company's executives, board members and owners from Forms 3/4/5 and 10-K executive lists, with first and last seen dates and origins. Same as GET /api/company/{ticker}/people.",
    input: z.strictObject({
      ticker: tickerArg,
      limit: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .optional()
        .describe('roles to return: executives, then board, then owners (default and max 1000)'),
      cursor: pageCursor,
    }),
    output: obj({
      ...companyHead,
      executives: z.array(obj({ name: str, role: str.optional(), role_type: str, ...sourceRow })),
      board: z.array(obj({ name: str, role: str.optional(), role_type: str, ...sourceRow })),
      owners: z.array(obj({ name: str })),
      origin: originLeaf.optional(),
      total: int,
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getCompanyPeople(reg(deps), a.ticker, { limit: a.limit, cursor: a.cursor })),
  },
  {
    name: 'sec_person',
    title: 'Person and career',
    description:
      'A person by case-insensitive partial name, with their career across companies (roles, periods, filings) and other matching names. Same as GET /api/person/{name}.',
    input: z.strictObject({
      name: z.string().trim().min(2).max(120).describe('person name or part of it, case-insensitive (e.g. "cook" or "Timothy D. Cook")'),
    }),
    output: obj({
      schema: str,
      person: obj({ name: str, cik: str.optional(), notes: str.optional() }),
      career: z.array(
        obj({
          company: str.optional(),
          ticker: str.optional(),
          cik: cikOut.optional(),
          role: str.optional(),
          role_type: str.optional(),
          period: z.union([str, obj({ from: str.optional(), to: str.optional() })]).optional(),
          ...sourceRow,
        }),
      ),
      other_matches: z.array(obj({ name: str, roles: int, companies: z.array(str) })),
      origin: originLeaf.optional(),
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getPerson(reg(deps), a.name)),
  },
  {
    name: 'sec_signals',
    title: 'Business signals',
    description:
      'Signals found in 10-K risk factors and MD&A (e.g. capex increase, layoffs, AI adoption), filtered by ticker, type, a second type, exchange and minimum strength; with no filter, the index of signal types with counts and measured precision. Same as GET /api/signals.',
    input: z.strictObject({
      ticker: tickerArg.optional().describe('only this company (ticker or CIK)'),
      type: signalType.optional().describe('signal type (see the index: call with no filter)'),
      also: signalType.optional().describe('a second signal type: only companies having both (needs type)'),
      exchange: z.string().trim().min(1).max(20).optional().describe('only companies listed on this exchange (e.g. Nasdaq, NYSE)'),
      min_strength: z
        .number()
        .int()
        .min(1)
        .max(3)
        .optional()
        .describe('minimum strength: 1 weak (hedged), 2 moderate (direct statement), 3 strong (quantified or repeated)'),
      limit: z.number().int().min(1).max(200).optional().describe('hits to return (default 50, max 200); alone, it also selects hits'),
      cursor: pageCursor,
    }),
    output: obj({
      schema: str,
      strength_scale: z.record(z.string(), str),
      types: z.array(obj({ type: str, description: str, hits: int, companies: int })).optional(),
      query: obj({ limit: int }).optional(),
      total: int.optional(),
      returned: int.optional(),
      signals: z
        .array(obj({ signal_type: str.optional(), ticker: str.optional(), strength: int.optional(), origin: originLeaf }))
        .optional(),
      origin: originLeaf.optional(),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    // Any argument selects hits (issue 19: only no parameters at all return the index); `limit` alone lists the strongest hits.
    // (min_strength 1 is every hit: strengths are 1 to 3).
    run: async ({ deps }, a) => asRecord(await listSignals(reg(deps), Object.keys(a).length ? { min_strength: 1, ...a } : a)),
  },
  {
    name: 'sec_search',
    title: 'Search the registry',
    description:
      'Search companies (name, summary, tags), people (name, notes) and timeline events matching every word of q, ranked. Same as GET /api/search.',
    input: z.strictObject({
      q: z.string().trim().min(1).max(200).describe('words to find, all must match, case-insensitive (e.g. "apple cupertino")'),
      limit: z.number().int().min(1).max(50).optional().describe('results per category (default 10, max 50)'),
      category: z.enum(SEARCH_CATEGORIES).optional().describe('page one list alone: companies, people or events; default all three'),
      cursor: pageCursor,
    }),
    output: obj({
      query: str,
      results: obj({
        companies: z.array(obj({ ticker: str, cik: cikOut, name: str, score: num, url: str })),
        people: z.array(obj({ name: str, roles: z.array(str), score: num, url: str })),
        events: z.array(obj({ event_type: str, title: str, accession: str, cik: cikOut, score: num })),
      }),
      total: int,
      limit: int,
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => {
      const limit = a.limit ?? 10;
      const opts = { q: a.q, limit, cursor: a.cursor, category: a.category };
      return withMembers(asRecord(await searchRegistry(reg(deps), opts, deps.options.publicBaseUrl)), { limit });
    },
  },
  {
    name: 'sec_quote',
    title: 'Latest quote',
    description:
      'The latest daily bar (open, high, low, close, volume) with market context (market cap from the latest share count) and its chained origin leaf. Same as GET /api/company/{ticker}/quote.',
    input: z.strictObject({ ticker: tickerArg, adjustment }),
    output: obj({
      schema: str,
      ticker: str,
      name: str.optional(),
      quote_date: str,
      adjustment: z.enum(['raw', 'split_dividend']),
      quote: obj({ open: num, high: num, low: num, close: num, volume: num }),
      flags: z.array(str),
      market_context: obj({ market_cap: num.optional(), shares_outstanding: num.optional(), origin: originLeaf.optional() }).optional(),
      origin: originLeaf,
      origin_verified: bool,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getLatestQuote(quoteDeps(deps), a.ticker, { adjustment: a.adjustment })),
  },
  {
    name: 'sec_quote_history',
    title: 'Quote history',
    description:
      'Daily bars, newest first, each with its origin leaf chained to the previous trading day (a hash chain back to the source file). Same as GET /api/company/{ticker}/quote/history.',
    input: z.strictObject({
      ticker: tickerArg,
      limit: z.number().int().min(1).max(HISTORY_MAX).optional().describe(`trading days (default ${HISTORY_DEFAULT}, max ${HISTORY_MAX})`),
      from: z.iso.date().optional().describe('first trading day of the window, YYYY-MM-DD; default: the latest days'),
      adjustment,
      cursor: pageCursor,
    }),
    output: obj({
      schema: str,
      ticker: str,
      name: str.optional(),
      adjustment: z.enum(['raw', 'split_dividend']),
      count: int,
      limit: int,
      from: str.optional(),
      chain: obj({ first_date: str, last_date: str, days: int, rule: str }),
      quotes: z.array(obj({ quote_date: str, quote: obj({ close: num }), flags: z.array(str), origin: originLeaf, origin_verified: bool })),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) =>
      asRecord(
        await getQuoteHistory(quoteDeps(deps), a.ticker, { limit: a.limit, from: a.from, adjustment: a.adjustment, cursor: a.cursor }),
      ),
  },
  {
    name: 'sec_transcripts',
    title: 'Earnings-call transcripts',
    description:
      "A company's earnings-call transcripts: titles, quarters, call dates, speakers, key metrics, topics, each with its origin, plus known call dates. Same as GET /api/company/{ticker}/transcripts.",
    input: z.strictObject({
      ticker: tickerArg,
      limit: z.number().int().min(1).max(500).optional().describe('transcripts to return, newest call first (default 200, max 500)'),
      cursor: pageCursor,
    }),
    output: obj({
      schema: str,
      ticker: str,
      name: str.optional(),
      transcript_count: int,
      transcripts: z.array(
        obj({
          transcript_key: str,
          title: str.optional(),
          fiscal_year: int.optional(),
          fiscal_quarter: int.optional(),
          call_date: str.optional(),
          speakers: z.array(z.union([str, obj({ name: str })])),
          key_metrics: z.array(z.union([str, obj({ metric: str })])),
          origin: originLeaf,
        }),
      ),
      call_dates: z.array(row),
      origin: originLeaf.optional(),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getCompanyTranscripts(transcriptDeps(deps), a.ticker, { limit: a.limit, cursor: a.cursor })),
  },
  {
    name: 'sec_facts',
    title: 'Transcript facts',
    description:
      "Facts extracted from a company's earnings calls (metrics, guidance, strategy) by topic, each with speaker, snippet and origin. Same as GET /api/company/{ticker}/facts.",
    input: z.strictObject({
      ticker: tickerArg,
      type: factType,
      topic: factTopic,
      limit: z.number().int().min(1).max(FACTS_MAX).optional().describe(`facts to return (default 100, max ${FACTS_MAX})`),
      cursor: pageCursor,
    }),
    output: obj({
      schema: str,
      ticker: str,
      name: str.optional(),
      filters: obj({ type: str.optional(), topic: str.optional() }),
      fact_count: int,
      total: int,
      facts: z.array(obj({ transcript_key: str, type: str, topic: str.optional(), snippet: str, origin: originLeaf })),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await getCompanyFacts(transcriptDeps(deps), a.ticker, a)),
  },
  {
    name: 'sec_transcript_search',
    title: 'Search transcript facts',
    description:
      'Across all companies: which companies talk about a topic (with first-mention dates and calls) and the matching facts; first=true gives only the first-mention date per company. Same as GET /api/search/transcripts.',
    input: z.strictObject({
      topic: factTopic,
      type: factType,
      first: z.boolean().optional().describe('true: only the first-mention date per company and topic, no facts'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(FACTS_MAX)
        .optional()
        .describe(
          `rows of each list to return: topic-company rows and facts (max ${FACTS_MAX}; without it, 50 facts and every topic-company row)`,
        ),
      category: z.enum(TRANSCRIPT_SEARCH_CATEGORIES).optional().describe('page one list alone: companies or facts; default both, together'),
      cursor: pageCursor,
    }),
    output: obj({
      schema: str,
      query: obj({ topic: str.optional(), type: str.optional(), first: bool }),
      topics: z.array(
        obj({ topic: str, company_count: int, companies: z.array(obj({ ticker: str, first_mention_date: str, mentions: int })) }),
      ),
      facts: z.array(obj({ ticker: str, transcript_key: str, type: str, snippet: str, origin: originLeaf })).optional(),
      company_total: int.optional(),
      fact_total: int.optional(),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await searchTranscripts(transcriptDeps(deps), a)),
  },
  {
    name: 'sec_verify',
    title: 'Verify an origin leaf',
    description:
      'Looks up an origin leaf hash (any origin or origin_leaf from another tool, or an origin.parent), walks its parent chain to the source file and returns an Ed25519-signed receipt; pass the previous receipt nonce as prev_nonce to chain receipts. Same as GET /api/verify/{leaf_hash}.',
    input: z.strictObject({
      leaf_hash: z
        .string()
        .regex(/^[a-f0-9]{64}$/, 'must be 64 lower-case hex characters (SHA-256)')
        .describe('the leaf_hash to verify: 64 lower-case hex characters'),
      prev_nonce: z
        .string()
        .regex(/^[a-f0-9]{32}$/, 'must be 32 lower-case hex characters (a receipt nonce)')
        .optional()
        .describe('nonce of a receipt this service issued earlier: the new receipt chains to it'),
    }),
    output: obj({
      leaf_hash: str,
      found: z.literal(true),
      domain: str,
      table_name: str.optional(),
      leaf: originLeaf,
      chain: obj({ valid: bool, problem: str.optional(), length: int, leaves: z.array(originLeaf) }),
      receipt,
      receipt_hash: str,
      how_to_verify: str,
    }),
    // A reader: it changes no data; each call appends its new receipt nonce to the receipt log, so chains can be checked.
    annotations: READ_ONLY,
    meter: 'registry',
    run: async ({ deps }, a) => asRecord(await verifyLeafHash(deps, a.leaf_hash, a.prev_nonce ?? null)),
  },
];
