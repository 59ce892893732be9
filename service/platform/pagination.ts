/**
 * The one pagination scheme of every list route (docs/architecture.md#pagination): `limit` plus an opaque `cursor`.
 * A page's body carries `next_cursor` (null on the last page) and `next`, the URL of the next page (the request's
 * URL with `cursor` replaced), and the HTTP answer a `Link: <next>; rel="next"` header (RFC 8288).
 *
 * The cursor is base64url JSON `{o: offset, s: snapshot id}`: the position in a deterministic order (every list
 * query orders by a unique key last) within one snapshot. A cursor of another snapshot is a 409: the rows moved,
 * so walking on could skip or repeat some; the client restarts from the first page. A malformed cursor is a 400
 * naming `cursor`. Query functions (shared with MCP) take and return cursors; only routes build URLs and headers.
 */
import type { H3Event } from 'h3';
import { z } from 'zod';
import { ConflictError, InvalidInputError } from '../../lib/errors.ts';

/** The `cursor` query parameter of every list route. */
export const cursorParam = z
  .string()
  .max(200)
  .optional()
  .describe('opaque cursor: `next_cursor` of the previous page (or follow `next` / the Link rel="next" header)');

interface CursorBody {
  o: number;
  s: string | null;
  /** The list within a route the offset belongs to (one category of a multi-list answer); absent for single lists. */
  c?: string;
}

/** A cursor at `offset` within one snapshot; `scope` names the list when a route serves several (search categories). */
export function encodeCursor(offset: number, snapshotId: string | null, scope?: string): string {
  const body: CursorBody = { o: offset, s: snapshotId, ...(scope ? { c: scope } : {}) };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/**
 * The offset a cursor stands for (0 without one); throws 400 naming `cursor` for a malformed cursor or one of
 * another list (`scope`), 409 for another snapshot's.
 */
export function decodeCursor(cursor: string | undefined, snapshotId: string | null, scope?: string): number {
  if (!cursor) return 0;
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    throw new InvalidInputError("'cursor' is not a cursor of this API", { response: { parameter: 'cursor' } });
  }
  if (!body || typeof body !== 'object' || !Number.isInteger(body.o) || body.o < 0)
    throw new InvalidInputError("'cursor' is not a cursor of this API", { response: { parameter: 'cursor' } });
  if ((body.c ?? undefined) !== scope)
    throw new InvalidInputError(`'cursor' is not a cursor of this list${scope ? ` (${scope})` : ''}`, {
      response: { parameter: 'cursor' },
    });
  if ((body.s ?? null) !== snapshotId)
    throw new ConflictError('the snapshot changed since this cursor was issued: start again from the first page', {
      response: { parameter: 'cursor', snapshot_id: snapshotId },
    });
  return body.o;
}

/**
 * Keyset cursors, for lists whose new rows arrive at their head (state-store lists, newest first): the cursor holds
 * the sort key of the last row returned, and the next page starts strictly after it, so rows added meanwhile
 * neither shift nor repeat the rows of later pages.
 */
export function encodeKeyCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify({ k: key })).toString('base64url');
}

/** The sort key a keyset cursor holds (null without one); 400 naming `cursor` for anything else. */
export function decodeKeyCursor(cursor: string | undefined, arity: number): string[] | null {
  if (!cursor) return null;
  let body: { k?: unknown };
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { k?: unknown };
  } catch {
    body = {};
  }
  const k = body?.k;
  if (!Array.isArray(k) || k.length !== arity || !k.every((v) => typeof v === 'string'))
    throw new InvalidInputError("'cursor' is not a cursor of this list", { response: { parameter: 'cursor' } });
  return k as string[];
}

/**
 * The one non-negative integer key of a keyset cursor (a DOT number or a sequence number; null without a cursor):
 * the monitoring lists page by it. 400 naming `cursor` for anything else, a bare number included.
 */
export function decodeSeqCursor(cursor: string | undefined): number | null {
  const k = decodeKeyCursor(cursor, 1);
  if (k === null) return null;
  const n = Number(k[0]);
  if (!/^\d{1,15}$/.test(k[0]!) || !Number.isSafeInteger(n))
    throw new InvalidInputError("'cursor' is not a cursor of this list", { response: { parameter: 'cursor' } });
  return n;
}

/** `next_cursor` of a page that started at `offset` and returned `returned` of `total` rows (null on the last page). */
export function nextCursorOf(offset: number, returned: number, total: number, snapshotId: string | null, scope?: string): string | null {
  return returned > 0 && offset + returned < total ? encodeCursor(offset + returned, snapshotId, scope) : null;
}

/** The absolute URL (on `baseUrl`) of the request with `cursor` set (and `offset` dropped), and `set` parameters set. */
export function pageUrl(event: H3Event, baseUrl: string, cursor: string, set: Record<string, string> = {}): string {
  const u = new URL(event.url.href);
  u.searchParams.delete('offset');
  for (const [k, v] of Object.entries(set)) u.searchParams.set(k, v);
  u.searchParams.set('cursor', cursor);
  return `${baseUrl.replace(/\/$/, '')}${u.pathname}${u.search}`;
}

/**
 * The HTTP answer of a page: the body with `next` (absolute URL of the next page on `baseUrl`, PUBLIC_BASE_URL, or
 * null on the last page), and the Link header when there is a next page.
 *
 * A route serving several lists in one answer (search: companies, people, events) gives `next_cursor_by_category`
 * (`category` → cursor or null) and `categoryParam`, the query parameter that selects one list: the body then also
 * carries `next_by_category`, each list's next-page URL with that parameter set (docs/architecture.md#pagination).
 */
export function pagedResponse(
  event: H3Event,
  page: { next_cursor: string | null; next_cursor_by_category?: Record<string, string | null> } & Record<string, unknown>,
  baseUrl: string,
  categoryParam?: string,
): Response {
  const next = page.next_cursor ? pageUrl(event, baseUrl, page.next_cursor) : null;
  const byCategory =
    page.next_cursor_by_category && categoryParam
      ? {
          next_by_category: Object.fromEntries(
            Object.entries(page.next_cursor_by_category).map(([c, cur]) => [
              c,
              cur ? pageUrl(event, baseUrl, cur, { [categoryParam]: c }) : null,
            ]),
          ),
        }
      : {};
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (next) headers.link = `<${next}>; rel="next"`;
  return new Response(JSON.stringify({ ...page, next, ...byCategory }), { status: 200, headers });
}
