/**
 * Builds the OpenAPI 3.1 document from the route registry: path and query
 * parameters from the zod query schemas (`z.toJSONSchema`, input side, since
 * query values arrive as strings and are coerced), 200 bodies from response
 * schemas, the shared error body, `usage_meta` and the rate-limit headers.
 */
import { z } from 'zod';
import { listRoutes, type RouteDoc } from '../platform/route-registry.ts';
import { AGENT_TYPES } from '../platform/agent-type.ts';

export const API_VERSION = '1.0.0';

type Json = Record<string, unknown>;

function jsonSchema(s: z.ZodType, io: 'input' | 'output'): Json {
  try {
    const js = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
    delete js.$schema;
    return js;
  } catch {
    return { type: 'object' };
  }
}

const usageMetaSchema: Json = {
  type: 'object',
  description: 'Merged into every JSON object body under /api: tier, hourly usage and the terms of use.',
  properties: {
    source: { type: 'string' },
    current_tier: { enum: ['free', 'pro'] },
    requests_this_hour: { type: 'integer' },
    hourly_limit: { type: 'integer' },
    remaining: { type: 'integer' },
    agent_type: { enum: [...AGENT_TYPES] },
    validation_required_for_commercial_use: { type: 'boolean' },
    license: { type: 'string', format: 'uri', description: 'URL of the license terms (/docs/rules#license)' },
    license_notice: { type: 'string', description: 'the license terms of the data served, in one sentence' },
    pricing: { type: 'string', format: 'uri', description: 'URL of the tiers and their prices (/docs/rules#pricing)' },
    trust_status: {
      type: 'string',
      description:
        'tells the client where to confirm the data at its primary source: the accession number on sec.gov (registry), the USDOT record on FMCSA SAFER (carrier and vetting paths), the custody chain at /api/care/{id}/verify (proof-of-care paths, self_reported)',
    },
    commercial_use_notice: { type: 'string' },
    upsell: { type: 'string' },
    tier_recommendation: { enum: ['free', 'pro'] },
  },
  required: [
    'source',
    'current_tier',
    'requests_this_hour',
    'hourly_limit',
    'remaining',
    'agent_type',
    'validation_required_for_commercial_use',
    'license',
    'license_notice',
    'pricing',
    'trust_status',
    'commercial_use_notice',
    'upsell',
    'tier_recommendation',
  ],
};

const errorSchema: Json = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    status: { type: 'integer' },
    parameter: { type: 'string', description: '400: the offending parameter' },
    hint: { type: 'string' },
    dependency: { type: 'string', description: '503: the dependency that did not answer in time (`state`, `postgres`)' },
    outcome: {
      type: 'string',
      enum: ['not_written', 'unknown'],
      description:
        '503 of a state-backed request: `not_written` (nothing applied, retry), `unknown` (a write past its deadline may still be applied: retry with the same Idempotency-Key to get the first answer once; docs/limits.md)',
    },
    usage_meta: { $ref: '#/components/schemas/UsageMeta' },
  },
  required: ['error', 'status'],
  additionalProperties: true,
};

const rateHeaders: Json = {
  'RateLimit-Limit': { schema: { type: 'integer' }, description: 'requests allowed per hour for this client' },
  'RateLimit-Remaining': { schema: { type: 'integer' } },
  'RateLimit-Reset': { schema: { type: 'integer' }, description: 'seconds until the hourly window resets' },
  'RateLimit-Policy': { schema: { type: 'string' }, description: 'e.g. `500;w=3600`' },
};

const STATUS_TEXT: Record<number, string> = {
  304: 'Not modified (If-None-Match matched the ETag)',
  400: 'Invalid parameter (the body names it)',
  401: 'Invalid or revoked API key',
  402: 'Payment required: credits exhausted, or a Pro-tier feature (the body says which)',
  404: 'Not found',
  409: 'Conflict with the current state (e.g. a pagination cursor of an older snapshot)',
  429: 'Hourly limit reached (Retry-After)',
  500: 'Internal error',
  503: 'Data not published yet or a dependency is down (Retry-After)',
};

function isMetered(r: RouteDoc): boolean {
  return r.metered ?? r.path.startsWith('/api/');
}

/** Descriptions of the route families (OpenAPI tags). */
const TAG_DESCRIPTIONS: Record<string, string> = {
  admin: 'Operator endpoints (ADMIN_TOKEN)',
  attestation: 'Signed root hashes over the published tables',
  care: 'Proof-of-care documents and their hash-chained custody events',
  carriers: 'FMCSA carriers: search, census, safety, crashes, inspections, enforcement, red flags',
  company: 'SEC registrants: identity card, profile, timeline, filings, earnings, people, signals',
  credits: 'Credit accounts of the vetting API',
  discovery: 'AI discovery files: manifest, knowledge, feed, archive, page manifest, query contract, llms.txt',
  export: 'Bulk export of the current snapshot (Pro tier)',
  health: 'Liveness and data freshness',
  mcp: 'Model Context Protocol endpoint',
  meta: 'This description and the reference pages',
  quotes: 'Daily quote bars with chained origin leaves',
  receipts: 'Signed verification receipts for origin leaves and their keys',
  search: 'Search over companies, people and events',
  stats: 'Registry totals and AI-agent query statistics',
  transcripts: 'Earnings-call extractions and facts',
  vetting: 'Signed carrier vetting records',
};

/** `getApiRedFlags` → `GetApiRedFlagsResponse`: the name of an operation's 200 body in components.schemas. */
function responseComponentName(operationId: string): string {
  return `${operationId.charAt(0).toUpperCase()}${operationId.slice(1)}Response`;
}

/** Named 200 bodies of the JSON routes, filled while the paths are built. */
let responseComponents: Record<string, Json> = {};

function operation(r: RouteDoc): Json {
  const parameters: Json[] = [];
  for (const m of r.path.matchAll(/\{([^}]+)\}/g)) {
    const name = m[1]!;
    parameters.push({ name, in: 'path', required: true, description: r.params?.[name] ?? name, schema: { type: 'string' } });
  }
  if (r.query) {
    for (const [name, s] of Object.entries(r.query.shape as Record<string, z.ZodType>)) {
      const js = jsonSchema(s, 'input');
      const description = (js.description as string | undefined) ?? (s as { description?: string }).description;
      delete js.description;
      parameters.push({
        name,
        in: 'query',
        required: !s.safeParse(undefined).success,
        ...(description ? { description } : {}),
        schema: js,
      });
    }
  }
  const metered = isMetered(r);
  let body: Json = r.response
    ? jsonSchema(r.response, 'output')
    : { type: 'object', ...(r.responseDescription ? { description: r.responseDescription } : {}) };
  if (metered && (body.type === 'object' || body.properties)) {
    body = {
      allOf: [body, { type: 'object', properties: { usage_meta: { $ref: '#/components/schemas/UsageMeta' } }, required: ['usage_meta'] }],
    };
  }
  const operationId = `${r.method.toLowerCase()}${r.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;
  const isJson = !r.contentType || r.contentType === 'application/json';
  let schema: Json = { type: 'string' };
  if (isJson) {
    const name = responseComponentName(operationId);
    responseComponents[name] = body;
    schema = { $ref: `#/components/schemas/${name}` };
  }
  const ok: Json = {
    description: r.responseDescription ?? 'OK',
    content: { [r.contentType ?? 'application/json']: { schema } },
    headers: { ETag: { schema: { type: 'string' } }, ...(metered ? rateHeaders : {}) },
  };
  const responses: Json = { [String(r.status ?? 200)]: ok };
  const statuses = new Set<number>([...(r.method === 'GET' ? [304] : []), ...(r.statuses ?? []), ...(metered ? [401, 429] : []), 500]);
  // Every route can answer a client error the HTTP layer raises (an unknown method, a malformed request).
  if (![...statuses].some((s) => s >= 400 && s < 500))
    responses['4XX'] = { description: 'Client error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  for (const s of [...statuses].sort()) {
    responses[String(s)] =
      s === 304
        ? { description: STATUS_TEXT[304] }
        : {
            description: STATUS_TEXT[s] ?? 'Error',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            ...(s === 429 || s === 503 ? { headers: { 'Retry-After': { schema: { type: 'integer' } } } } : {}),
          };
  }
  const op: Json = {
    operationId,
    summary: r.summary,
    tags: [r.family],
    parameters,
    responses,
  };
  if (r.description) op.description = r.description;
  if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(r.body, 'input') } } };
  // Metered routes: anonymous (free tier) or a Pro key; the others are public (an explicitly empty requirement).
  op.security = metered ? [{}, { bearerAuth: [] }] : [];
  return op;
}

/** The OpenAPI 3.1 document for every route described so far. */
export function buildOpenApiDocument(baseUrl: string, version: string): Json {
  const paths: Record<string, Json> = {};
  responseComponents = {};
  for (const r of listRoutes()) {
    (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Proofline API',
      version: API_VERSION,
      license: { name: 'MIT', identifier: 'MIT' },
      description: `Verifiable company-registry, market and carrier data for AI agents. Every data-bearing response carries an \`origin\` leaf (SHA-256 over RFC 8785 JSON) that /api/verify/{leaf_hash} turns into an Ed25519-signed receipt. Free tier: no key, per-IP hourly limit; Pro tier: \`Authorization: Bearer <key>\`. Service build ${version}.`,
    },
    servers: [{ url: baseUrl }],
    tags: [...new Set(listRoutes().map((r) => r.family))]
      .sort()
      .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `The ${name} routes` })),
    paths,
    components: {
      schemas: { UsageMeta: usageMetaSchema, Error: errorSchema, ...responseComponents },
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Pro-tier API key (npm run apikeys -- create)' } },
    },
  };
}
