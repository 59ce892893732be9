/**
 * Answer schemas of the transcript routes (/api/company/{ticker}/transcripts, /facts, /api/search/transcripts):
 * OpenAPI components of their 200 bodies, checked against live answers by test/api/openapi-conformance.test.ts.
 * Names and types are the served ones (spec 000 "transcript index": speakers and key_metrics arrays of strings, the
 * parsed objects beside them in *_detail); nullable where the column is (jobs/transcripts/tables.sql).
 */
import { z } from 'zod';
import { limitClampedSchema, originLeafSchema, pageMembers } from '../platform/answer-schemas.ts';

const str = z.string();
const strN = z.string().nullable();
const intN = z.number().int().nullable();
const schemaId = z.literal('proofline/sec-transcripts/v1');
const factType = z.enum(['metric', 'guidance', 'strategy']);

export const transcriptsAnswer = z.object({
  schema: schemaId,
  ticker: str,
  name: strN,
  transcript_count: z.number().int(),
  transcripts: z.array(
    z.object({
      transcript_key: str,
      title: str,
      fiscal_quarter: intN,
      fiscal_year: intN,
      call_date: strN,
      format: str,
      speakers: z.array(str),
      speakers_detail: z.array(
        z.looseObject({ id: str, name: str, title: strN, role: str, turns: z.number().int(), words: z.number().int() }),
      ),
      qa_present: z.boolean(),
      qa_questions: z.number().int(),
      key_metrics: z.array(str),
      key_metrics_detail: z.array(
        z.union([str, z.looseObject({ metric: str, value: strN, speaker: strN.optional(), snippet: strN.optional() })]),
      ),
      word_count: z.number().int(),
      topics: z.record(z.string(), z.number()).describe('mentions per topic'),
      notes: z.array(str),
      origin: originLeafSchema,
      markdown_origin: originLeafSchema,
      source_origin: originLeafSchema,
      fetch_origin: originLeafSchema.nullable(),
    }),
  ),
  call_dates: z.array(z.object({ fiscal_year: z.number().int(), fiscal_quarter: z.number().int(), call_date: str, call_time: str })),
  origin: originLeafSchema,
  limit_clamped: limitClampedSchema,
  ...pageMembers,
});

const fact = {
  transcript_key: str,
  call_date: strN,
  fiscal_year: intN,
  fiscal_quarter: intN,
  type: factType,
  topic: str,
  speaker: strN,
  snippet: str,
  origin: originLeafSchema,
};

export const factsAnswer = z.object({
  schema: schemaId,
  ticker: str,
  name: strN,
  filters: z.object({ type: strN, topic: strN }),
  fact_count: z.number().int().describe('facts on this page'),
  total: z.number().int().describe('matching facts over every page'),
  limit_clamped: limitClampedSchema,
  facts: z.array(z.object({ ...fact, section: z.enum(['prepared', 'qa']), pattern: str })),
  ...pageMembers,
});

export const searchTranscriptsAnswer = z.object({
  schema: schemaId,
  query: z.object({ topic: strN, type: strN, first: z.boolean() }),
  topics: z.array(
    z.object({
      topic: str,
      company_count: z.number().int(),
      companies: z.array(
        z.object({
          ticker: str,
          first_mention_date: strN,
          mentions: z.number().int(),
          calls: z
            .array(
              z.object({
                transcript_key: str,
                title: str,
                call_date: strN,
                fiscal_year: intN,
                fiscal_quarter: intN,
                mentions: z.number().int(),
              }),
            )
            .optional()
            .describe('absent with first=true'),
        }),
      ),
    }),
  ),
  company_total: z.number().int().optional().describe('topic-company rows over every page (absent with category=facts)'),
  limit_clamped: limitClampedSchema,
  facts: z
    .array(z.object({ ticker: str, ...fact }))
    .optional()
    .describe('absent with first=true or category=companies'),
  fact_total: z.number().int().optional().describe('matching facts over every page (absent when facts is)'),
  ...pageMembers,
});
