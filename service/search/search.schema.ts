/** Answer schema of /api/search (companies, people and timeline events, ranked): the OpenAPI component of its body, checked live by test/api/openapi-conformance.test.ts. */
import { z } from 'zod';
import { pageMembers } from '../platform/answer-schemas.ts';

const company = z.object({
  ticker: z.string(),
  cik: z.number(),
  name: z.string(),
  exchange: z.string().nullable(),
  status: z.string(),
  sic_description: z.string().nullable(),
  score: z.number(),
  url: z.string(),
});

const person = z.object({
  name: z.string(),
  person_cik: z.string().nullable(),
  notes: z.string().nullable(),
  tickers: z.array(z.string()).nullable(),
  roles: z.array(z.string()),
  score: z.number(),
  url: z.string(),
});

const event = z.object({
  event_type: z.string(),
  title: z.string(),
  summary: z.string().nullable(),
  event_date: z.string().nullable(),
  filing_date: z.string().nullable(),
  accession: z.string(),
  document_url: z.string().nullable(),
  cik: z.number(),
  ticker: z.string().nullable(),
  company_name: z.string().nullable(),
  score: z.number(),
});

export const searchAnswer = z.object({
  query: z.string(),
  results: z.object({ companies: z.array(company), people: z.array(person), events: z.array(event) }),
  total: z.number().describe('number of matches of all three lists, not the number returned'),
  totals: z.object({ companies: z.number(), people: z.number(), events: z.number() }),
  limit: z.number(),
  limit_clamped: z.object({ requested: z.number(), max: z.number() }).optional(),
  ...pageMembers,
});
