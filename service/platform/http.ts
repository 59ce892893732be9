/**
 * HTTP helpers shared by every route family: the one mapping from the error
 * tree (lib/errors.ts) to JSON error bodies, and query validation that names
 * the offending parameter.
 *
 * Error body shape, for every 4xx/5xx: `{error, status, ...details}` where
 * `error` is a human sentence. 404s add what was looked up (`ticker`, `dot`)
 * and a `hint` when there are close matches.
 */
import { HTTPError, getQuery, type H3Event } from 'h3';
import { z } from 'zod';
import { classifyError, httpStatusFor, InvalidInputError, PipelineError, publicMessage } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { DEFAULT_BODY_LIMIT, readBodyText } from './body.ts';
import { findJsonProblem } from '../../lib/json-guard.ts';

/** Builds the JSON error response for any thrown value (h3's onError hands us HTTPError wrapping ours as `cause`). */
export function errorResponse(err: unknown, log?: Logger): Response {
  let e: unknown = err;
  if (err instanceof HTTPError && err.cause instanceof PipelineError) e = err.cause;
  let status: number;
  let body: Record<string, unknown>;
  if (e instanceof PipelineError) {
    status = httpStatusFor(e);
    const details = (e.context.response as Record<string, unknown> | undefined) ?? {};
    body = { error: publicMessage(e), status, ...details };
  } else if (e instanceof HTTPError && !e.unhandled) {
    status = e.status;
    body = { error: e.message || e.statusText || 'request failed', status, ...((e.data as object) ?? {}) };
  } else {
    status = 500;
    body = { error: 'internal error', status };
    log?.error({ err: (e as HTTPError).cause ?? e }, 'unhandled error');
  }
  if (classifyError(e) === 'transient') body.retry_after_seconds = 5;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  // Headers an error carries for its answer (a 429's RateLimit-* and Retry-After: metering.ts meterDoor).
  if (e instanceof PipelineError && e.context.headers) Object.assign(headers, e.context.headers as Record<string, string>);
  if (status === 503) headers['retry-after'] = '5';
  // A refused body is not read further: close the connection rather than drain the rest (issue 25).
  if (status === 413) headers.connection = 'close';
  return new Response(JSON.stringify(body), { status, headers });
}

/**
 * h3 refuses a request whose path is not valid percent-encoded UTF-8
 * (`/api/company/%E0%A4`) before any route runs, with a bare 400 "Bad
 * Request"; this gives such a 400 a message naming the problem (`parameter:
 * path`). Any other error is returned as it is.
 */
export function explainMalformedPath(err: unknown, event: H3Event | undefined): unknown {
  if (!(err instanceof HTTPError) || err.status !== 400 || event === undefined) return err;
  try {
    decodeURI(event.url.pathname);
    return err;
  } catch {
    return new InvalidInputError(`the request path is not valid percent-encoded UTF-8: ${event.url.pathname.slice(0, 200)}`, {
      response: { parameter: 'path' },
    });
  }
}

/**
 * Validates the query string with a zod schema. Unknown parameters are
 * ignored; a type error is a 400 naming the parameter.
 */
export function parseQuery<S extends z.ZodType>(event: H3Event, schema: S): z.infer<S> {
  const raw = getQuery(event) as Record<string, unknown>;
  const res = schema.safeParse(raw);
  if (!res.success) {
    const issue = res.error.issues[0];
    const param = issue?.path.join('.') || 'query';
    throw new InvalidInputError(`invalid parameter '${param}': ${issue?.message}`, { response: { parameter: param } });
  }
  return res.data;
}

/**
 * Validates a JSON body with a zod schema; malformed JSON, JSON the canonical
 * hashing cannot represent (lib/json-guard.ts) and wrong shapes are 400s
 * naming the field. The body is read under `limitBytes` (413 past it,
 * enforced while streaming: body.ts).
 */
export async function parseBody<S extends z.ZodType>(event: H3Event, schema: S, opts: { limitBytes?: number } = {}): Promise<z.infer<S>> {
  const ct = event.req.headers.get('content-type') ?? '';
  if (!ct.includes('application/json'))
    throw new InvalidInputError('request body must be JSON (Content-Type: application/json)', { response: { parameter: 'body' } });
  const text = await readBodyText(event.req, opts.limitBytes ?? DEFAULT_BODY_LIMIT);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InvalidInputError('request body is not valid JSON', { response: { parameter: 'body' } });
  }
  // What the canonical hashing cannot take as sent is a 400 naming the field, before anything is hashed or written.
  const problem = findJsonProblem(text);
  if (problem)
    throw new InvalidInputError(`invalid field '${problem.path}': ${problem.problem}`, { response: { parameter: problem.path } });
  const res = schema.safeParse(json);
  if (!res.success) {
    const issue = res.error.issues[0];
    const field = issue?.path.join('.') || 'body';
    throw new InvalidInputError(`invalid field '${field}': ${issue?.message}`, { response: { parameter: field } });
  }
  return res.data;
}

/** The `limit` query parameter of a route whose `clampLimit(limit, def, max)` clamps it (documented for OpenAPI). */
export function limitParam(def: number, max: number) {
  return z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`default ${def}, max ${max} (larger values are clamped and the body says so in limit_clamped)`);
}

/** Clamps `limit` to `[1, max]`, returning the value and a note when it was clamped. */
export function clampLimit(
  requested: number | undefined,
  def: number,
  max: number,
): { limit: number; clamped: { requested: number; max: number } | null } {
  const want = requested ?? def;
  if (want > max) return { limit: max, clamped: { requested: want, max } };
  return { limit: Math.max(1, want), clamped: null };
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), or null when there is none. */
export function bearerTokenOf(authorization: string | null | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m ? m[1]! : null;
}
