/**
 * Proof of care: POST /api/care, POST /api/care/{id}/event, GET /api/care,
 * GET /api/care/{id} (HTML; `.json` for JSON), GET /api/care/{id}/verify
 * (pure hash-chain check, no authentication). No update or delete route exists.
 */
import { getRouterParam, type H3, type H3Event } from 'h3';
import { z } from 'zod';
import { InvalidInputError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { clampLimit, limitParam, parseBody, parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { careEventAnswer, careListAnswer, careVerifyAnswer, createCareAnswer } from './care.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { DISCOVERY_LINK_HEADER } from '../platform/discovery-html.ts';
import { stateOf } from '../platform/guards.ts';
import { emitCareEvent } from '../monitoring/webhooks.queries.ts';
import { CARE_STAGES } from './care.chain.ts';
import { renderCarePage } from './care.page.ts';
import {
  appendCareEventOf,
  careEventInput,
  createCareDocument,
  createCareInput,
  getCareDocument,
  listCareDocuments,
  verifyCareDocument,
} from './care.queries.ts';

const listQuery = z.object({ limit: limitParam(50, 500), cursor: cursorParam });
const ID = /^POGC-[A-Za-z0-9-]+$/;

function docId(event: H3Event): string {
  const raw = decodeURIComponent(getRouterParam(event, 'id') ?? '');
  const id = raw.endsWith('.json') ? raw.slice(0, -5) : raw;
  if (!ID.test(id))
    throw new InvalidInputError(`invalid parameter 'id': must be a POGC-... document id`, { response: { parameter: 'id' } });
  return id;
}

describeRoute({
  method: 'POST',
  path: '/api/care',
  family: 'care',
  summary: 'Open a proof-of-care custody document (a given vetting_id must exist)',
  body: createCareInput,
  status: 201,
  statuses: [400, 404, 503],
  response: createCareAnswer,
});
describeRoute({
  method: 'POST',
  path: '/api/care/{id}/event',
  family: 'care',
  summary: `Append a custody event; stages ${CARE_STAGES.join(', ')} (order rules in docs/vetting-and-care.md)`,
  params: { id: 'POGC-... document id' },
  body: careEventInput,
  status: 201,
  statuses: [400, 404, 409, 503],
  response: careEventAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/care',
  family: 'care',
  summary: 'Recent custody documents, newest first',
  query: listQuery,
  response: careListAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/care/{id}',
  family: 'care',
  summary: 'Printable custody page (HTML); append .json for the JSON export',
  params: { id: 'POGC-... document id, optionally with .json' },
  contentType: 'text/html',
  statuses: [400, 404],
});
describeRoute({
  method: 'GET',
  path: '/api/care/{id}/verify',
  family: 'care',
  summary: 'Pure hash-chain check: {valid, events_verified, problems[]}',
  params: { id: 'POGC-... document id' },
  statuses: [400, 404],
  response: careVerifyAnswer,
});

export function registerCareRoutes(app: H3, deps: ServiceDeps): void {
  app.post('/api/care', async (event) => {
    const body = await parseBody(event, createCareInput);
    const doc = await createCareDocument(stateOf(deps), body, deps.now());
    event.res.status = 201;
    return {
      ...doc,
      links: {
        self: `/api/care/${doc.document_id}`,
        json: `/api/care/${doc.document_id}.json`,
        events: `/api/care/${doc.document_id}/event`,
        verify: `/api/care/${doc.document_id}/verify`,
      },
    };
  });

  app.post('/api/care/:id/event', async (event) => {
    const id = docId(event);
    const body = await parseBody(event, careEventInput);
    const { event: ev, vetting_id } = await appendCareEventOf(stateOf(deps), id, body, deps.now());
    // Webhooks (docs/monitoring.md): care.event to the account owning the document, when it has one (a document opened
    // without a vetting has none: no query).
    if (vetting_id !== null) await emitCareEvent(stateOf(deps), deps.monitoringJobs, id, ev, deps.now());
    event.res.status = 201;
    return ev;
  });

  app.get('/api/care', async (event) => {
    const q = parseQuery(event, listQuery);
    const { limit, clamped } = clampLimit(q.limit, 50, 500);
    const { documents, next_cursor } = await listCareDocuments(stateOf(deps), limit, q.cursor);
    return pagedResponse(
      event,
      { count: documents.length, limit, ...(clamped ? { limit_clamped: clamped } : {}), documents, next_cursor },
      deps.options.publicBaseUrl,
    );
  });

  app.get('/api/care/:id/verify', async (event) => verifyCareDocument(stateOf(deps), docId(event)));

  app.get('/api/care/:id', async (event) => {
    const id = docId(event);
    const full = await getCareDocument(stateOf(deps), id);
    if ((getRouterParam(event, 'id') ?? '').endsWith('.json')) return full;
    const html = renderCarePage(full.document, full.events, full.verification, {
      jsonHref: `/api/care/${id}.json`,
      verifyHref: `/api/care/${id}/verify`,
      vettingHref: full.document.vetting_id ? `/api/vetting?id=${full.document.vetting_id}` : null,
    });
    return new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8', link: DISCOVERY_LINK_HEADER } });
  });
}
