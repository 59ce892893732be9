/**
 * Contract tables of the securities company-registry specification (`../shared/spec/000_21a7ec1867cd30d8.txt`),
 * transcribed from every table of its "Resources and their fields" section: field path, type, required. Where the
 * specification types a field, that name and type are the contract; Proofline's richer data goes in fields beside
 * them (`speakers_detail`, `period_detail`, `db_detail`, `license_notice`, ...), which these tables do not constrain.
 *
 * Transcription choices (the specification is silent on these; documented in docs/registry.md#the-contract):
 * - every field of a table is `required`: the specification lists them as the resource's fields;
 * - `nullable` only where the data can be absent for a real company (no quote or share count, no 10-K employee
 *   figure, no exchange listing, no SIC code): the field is then present with null, never missing;
 * - `identity.cik` is `digits` (the table: "digits as text"); `quote_date` a `date`; `timestamp` a `datetime`;
 *   `license` and `pricing` are `url` ("string, URL").
 */
import type { ContractTable } from './shape.js';

export const SPEC_000 = '000_21a7ec1867cd30d8.txt';

export const IDENTITY_CARD: ContractTable = {
  spec: `${SPEC_000}: company identity card (layer 0)`,
  fields: [
    { path: 'schema', type: 'string', required: true },
    { path: 'layer', type: 'integer', required: true },
    { path: 'identity', type: 'object', required: true },
    { path: 'identity.name', type: 'string', required: true },
    { path: 'identity.cik', type: 'digits', required: true },
    { path: 'identity.ticker', type: 'string', required: true },
    { path: 'identity.exchange', type: 'string', required: true, nullable: true },
    { path: 'identity.sic', type: 'string', required: true, nullable: true },
    { path: 'identity.sic_description', type: 'string', required: true, nullable: true },
    { path: 'identity.state_of_incorporation', type: 'string', required: true, nullable: true },
    { path: 'identity.headquarters', type: 'string', required: true, nullable: true },
    { path: 'identity.status', type: 'string', required: true },
    { path: 'summary', type: 'string', required: true },
    { path: 'peak_metrics', type: 'object', required: true },
    { path: 'peak_metrics.market_cap_usd', type: 'number', required: true, nullable: true },
    { path: 'peak_metrics.employees', type: 'integer', required: true, nullable: true },
    { path: 'tags', type: 'array', required: true },
    { path: 'tags[]', type: 'string', required: false },
    { path: 'deeper', type: 'object', required: true },
    { path: 'origin', type: 'object', required: true },
  ],
};

/** "The not-found body has the fields `error`, `ticker`, `hint`, all strings." */
export const NOT_FOUND: ContractTable = {
  spec: `${SPEC_000}: company not-found body`,
  fields: [
    { path: 'error', type: 'string', required: true },
    { path: 'ticker', type: 'string', required: true },
    { path: 'hint', type: 'string', required: true },
  ],
};

export const STOCK_QUOTE: ContractTable = {
  spec: `${SPEC_000}: stock quote`,
  fields: [
    { path: 'schema', type: 'string', required: true },
    { path: 'ticker', type: 'string', required: true },
    { path: 'name', type: 'string', required: true, nullable: true },
    { path: 'quote_date', type: 'date', required: true },
    { path: 'quote.open', type: 'number', required: true },
    { path: 'quote.high', type: 'number', required: true },
    { path: 'quote.low', type: 'number', required: true },
    { path: 'quote.close', type: 'number', required: true },
    { path: 'quote.volume', type: 'integer', required: true },
    { path: 'quote.vwap', type: 'number', required: true, nullable: true },
    { path: 'quote.trade_count', type: 'integer', required: true, nullable: true },
    { path: 'market_context.market_cap', type: 'number', required: true, nullable: true },
    { path: 'market_context.employees', type: 'integer', required: true, nullable: true },
    { path: 'market_context.shares_outstanding', type: 'number', required: true, nullable: true },
    { path: 'origin', type: 'object', required: true },
  ],
};

export const TRANSCRIPT_INDEX: ContractTable = {
  spec: `${SPEC_000}: transcript index`,
  fields: [
    { path: 'schema', type: 'string', required: true },
    { path: 'ticker', type: 'string', required: true },
    { path: 'name', type: 'string', required: true, nullable: true },
    { path: 'transcript_count', type: 'integer', required: true },
    { path: 'transcripts', type: 'array', required: true },
    { path: 'transcripts[].title', type: 'string', required: true },
    { path: 'transcripts[].fiscal_quarter', type: 'integer', required: true },
    { path: 'transcripts[].fiscal_year', type: 'integer', required: true },
    { path: 'transcripts[].call_date', type: 'string', required: true },
    { path: 'transcripts[].speakers', type: 'array', required: true },
    { path: 'transcripts[].speakers[]', type: 'string', required: false },
    { path: 'transcripts[].qa_questions', type: 'integer', required: true },
    { path: 'transcripts[].key_metrics', type: 'array', required: true },
    { path: 'transcripts[].key_metrics[]', type: 'string', required: false },
    { path: 'transcripts[].word_count', type: 'integer', required: true },
    { path: 'origin', type: 'object', required: true },
  ],
};

export const PERSON_CAREER: ContractTable = {
  spec: `${SPEC_000}: person career`,
  fields: [
    { path: 'schema', type: 'string', required: true },
    { path: 'person.name', type: 'string', required: true },
    { path: 'person.notes', type: 'string', required: true },
    { path: 'career', type: 'array', required: true },
    { path: 'career[].company', type: 'string', required: true },
    { path: 'career[].ticker', type: 'string', required: true, nullable: true },
    { path: 'career[].role', type: 'string', required: true },
    { path: 'career[].role_type', type: 'string', required: true },
    { path: 'career[].period', type: 'string', required: true },
  ],
};

export const SEARCH_RESULT: ContractTable = {
  spec: `${SPEC_000}: search result`,
  fields: [
    { path: 'query', type: 'string', required: true },
    { path: 'results.companies', type: 'array', required: true },
    { path: 'results.companies[]', type: 'object', required: false },
    { path: 'results.people', type: 'array', required: true },
    { path: 'results.people[]', type: 'object', required: false },
    { path: 'results.events', type: 'array', required: true },
    { path: 'results.events[]', type: 'object', required: false },
    { path: 'total', type: 'integer', required: true },
  ],
};

export const HEALTH: ContractTable = {
  spec: `${SPEC_000}: health`,
  fields: [
    { path: 'status', type: 'string', required: true },
    { path: 'uptime_seconds', type: 'integer', required: true },
    { path: 'timestamp', type: 'datetime', required: true },
    { path: 'db', type: 'string', required: true },
  ],
};

export const USAGE_META: ContractTable = {
  spec: `${SPEC_000}: usage metadata`,
  fields: [
    { path: 'usage_meta', type: 'object', required: true },
    { path: 'usage_meta.source', type: 'string', required: true },
    { path: 'usage_meta.current_tier', type: 'string', required: true },
    { path: 'usage_meta.requests_this_hour', type: 'integer', required: true },
    { path: 'usage_meta.hourly_limit', type: 'integer', required: true },
    { path: 'usage_meta.remaining', type: 'integer', required: true },
    { path: 'usage_meta.agent_type', type: 'string', required: true },
    { path: 'usage_meta.validation_required_for_commercial_use', type: 'boolean', required: true },
    { path: 'usage_meta.license', type: 'url', required: true },
    { path: 'usage_meta.pricing', type: 'url', required: true },
    { path: 'usage_meta.trust_status', type: 'string', required: true },
    { path: 'usage_meta.commercial_use_notice', type: 'string', required: true },
    { path: 'usage_meta.upsell', type: 'string', required: true },
    { path: 'usage_meta.tier_recommendation', type: 'string', required: true },
  ],
};

/** Value sets the specification states ("States and transitions", health, tiers). */
export const SPEC_000_VALUES = {
  company_status: ['active', 'inactive', 'acquired', 'delisted'],
  health_status: ['healthy', 'degraded'],
  tiers: ['free', 'pro'],
  signal_types: ['capex_increase', 'ai_adoption', 'restructuring'],
} as const;

/** Layer sizes the specification states ("about 200 / 800 / 2000 tokens"), as pinned by the contract suite. */
export const SPEC_000_LAYER_TOKENS = { identity: 200, profile: 800, timeline: 2000 } as const;
