/**
 * The AI discovery family: `/.well-known/ai`, `/ai/knowledge.json`,
 * `/ai/feed.json`, `/.well-known/archive`, `/ai/pages.json`, `/ai/query`,
 * `/llms.txt` and the human home page `/`. Files are served directly (no
 * redirect) with `Access-Control-Allow-Origin: *`, the spec's Cache-Control
 * lifetimes and a strong ETag derived from the contentHash (304 on a matching
 * If-None-Match). Also installs the Link header on every HTML response.
 */
import { withMembers } from '../../lib/objects.ts';
import type { H3, H3Event } from 'h3';
import { getQuery } from 'h3';
import { InvalidInputError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { parseBody } from '../platform/http.ts';
import { aiQuerySchema, runAiQuery, servesCarrierQueries, type AiQuery } from './ai-query.queries.ts';
import { doorRequestOf, meterDoor, usageOf } from '../platform/metering.ts';
import { registerDiscoveryLinkHeader } from '../platform/discovery-html.ts';
import { toFastResponse } from '../platform/response-finish.ts';
import { PATHS } from './discovery.documents.ts';
import { DiscoveryPublisher, type ServedFile } from './discovery.publisher.ts';
import { describeRoute } from '../platform/route-registry.ts';
import {
  aiQueryAnswer,
  aiQueryGetAnswer,
  archiveAnswer,
  feedAnswer,
  knowledgeAnswer,
  manifestAnswer,
  manifestJsonSchemaAnswer,
  pagesAnswer,
} from './discovery.schema.ts';

// The discovery files and /ai/query (never metered as /api routes are: /ai/query meters as the routes it mirrors).
const documented = { family: 'discovery', metered: false } as const;
describeRoute({
  ...documented,
  method: 'GET',
  path: PATHS.manifest,
  summary: 'AI Discovery manifest of this instance (signed: _signature)',
  response: manifestAnswer,
});
describeRoute({
  ...documented,
  method: 'GET',
  path: PATHS.archive,
  summary: 'Archive of superseded discovery documents',
  response: archiveAnswer,
});
describeRoute({
  ...documented,
  method: 'GET',
  path: PATHS.knowledge,
  summary: 'Discovery knowledge: summary, glossary, products, technology',
  response: knowledgeAnswer,
});
describeRoute({ ...documented, method: 'GET', path: PATHS.feed, summary: 'Discovery feed', response: feedAnswer });
describeRoute({
  ...documented,
  method: 'GET',
  path: PATHS.pages,
  summary: 'Discovery page manifest with page hashes',
  response: pagesAnswer,
});
describeRoute({
  ...documented,
  method: 'GET',
  path: PATHS.schema,
  summary: 'JSON Schema of the ai-discovery 1.1.1 manifest this instance conforms to',
  response: manifestJsonSchemaAnswer,
});
describeRoute({
  family: 'discovery',
  metered: false,
  method: 'GET',
  path: PATHS.query,
  summary: 'Discovery query: without parameters the query contract; with q (and type company or carrier) the answer',
  query: aiQuerySchema.partial(),
  response: aiQueryGetAnswer,
  statuses: [400, 404, 429, 503],
});
describeRoute({
  family: 'discovery',
  metered: false,
  method: 'POST',
  path: PATHS.query,
  summary: 'Discovery query endpoint: {q, type} → identity cards (company) or carrier search rows (carrier)',
  body: aiQuerySchema,
  response: aiQueryAnswer,
  statuses: [400, 404, 429, 503],
});

function etagMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  // If-None-Match uses the weak comparison (RFC 9110 §13.1.2).
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/**
 * A served file's answer, finished from its bytes encoded once (ServedFile.bytes) as a layer answer: the node listener
 * writes it with one `end` (node-listener.ts) instead of encoding the text and streaming a web Response in chunks
 * (issue 22: `/.well-known/archive`, 768 KB at full scale, held 1,265 req/s, p99 13 ms). Same status, headers and bytes.
 */
function serveFile(event: H3Event, f: ServedFile): Response {
  const headers: Record<string, string> = {
    'content-type': f.contentType,
    'cache-control': `public, max-age=${f.cacheSeconds}`,
    etag: f.etag,
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'ETag, Link',
  };
  if (etagMatches(event.req.headers.get('if-none-match'), f.etag)) {
    const { 'content-type': _ct, ...rest } = headers;
    return new Response(null, { status: 304, headers: rest });
  }
  return toFastResponse({ status: 200, headers, body: f.bytes });
}

function queryResponse(body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: withMembers(headers, {
      'content-type': 'application/json; charset=utf-8',
      'access-control-allow-origin': '*',
      'cache-control': 'no-store',
    }),
  });
}

/**
 * /ai/query is metered as the REST routes it mirrors (one rule for every door, docs/limits.md): a company query
 * counts against the tier's hourly limit, a carrier query against the lookup abuse guard; 429 past it.
 */
async function meteredQuery(deps: ServiceDeps, event: H3Event, query: AiQuery): Promise<Response> {
  const door = await meterDoor(
    deps,
    await usageOf(deps),
    doorRequestOf(event.req, `${PATHS.query}?type=${query.type}`),
    query.type === 'carrier' ? 'lookup' : 'registry',
  );
  return queryResponse(await runAiQuery(deps, query), door.headers);
}

export function registerDiscoveryRoutes(app: H3, deps: ServiceDeps): DiscoveryPublisher {
  const publisher = new DiscoveryPublisher(deps, app, servesCarrierQueries(deps));
  registerDiscoveryLinkHeader(app);
  const serve = (path: string) => async (event: H3Event) => serveFile(event, (await publisher.file(path))!);
  for (const p of [PATHS.manifest, PATHS.knowledge, PATHS.feed, PATHS.archive, PATHS.pages, PATHS.llms, PATHS.home, PATHS.schema])
    app.get(p, serve(p));

  app.get(PATHS.query, async (event) => {
    const raw = getQuery(event) as Record<string, unknown>;
    if (raw.q === undefined && raw.type === undefined) return serveFile(event, (await publisher.file(PATHS.query))!);
    const parsed = aiQuerySchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const param = issue?.path.join('.') || 'q';
      throw new InvalidInputError(`invalid parameter '${param}': ${issue?.message}`, {
        response: { parameter: param, contract: `${deps.options.publicBaseUrl}${PATHS.query}` },
      });
    }
    return meteredQuery(deps, event, parsed.data);
  });
  app.post(PATHS.query, async (event) => meteredQuery(deps, event, await parseBody(event, aiQuerySchema)));
  return publisher;
}
