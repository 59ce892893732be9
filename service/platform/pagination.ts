/**
 * The one pagination scheme of every list route (docs/architecture.md#pagination): `limit` plus an opaque `cursor`.
 * A page's body carries `next_cursor` (null on the last page) and `next`, the URL of the next page (the request's
 * URL with `cursor` replaced), and the HTTP answer a `Link: <next>; rel="next"` header (RFC 8288).
 *
 * The cursor is base64url JSON `{o: offset, s: snapshot id}`: the position in a deterministic order (every list
 * query orders by a unique key last) within one snapshot. A cursor of another snapshot is a 409: the rows moved,
 * so walking on could skip or repeat some; the client restarts from the first page. A malformed cursor is a 400
 * naming `cursor`. Query functions (shared with MCP) take and return cursors; only routes build URLs and headers.
 *
 * Two more cursor kinds share the codec (base64url JSON, exactly: a changed or appended character is a 400): keyset
 * cursors `{k: [...]}` for lists whose rows arrive at the head (state-store lists, quote history, rankings pinned to
 * a window), and offsets cursors `{m: {list: offset}, s}` for answers holding several lists (search).
 */
import { withMembers } from '../../lib/objects.ts';
import type { H3Event } from 'h3';
import { z } from 'zod';
import { ConflictError, InvalidInputError } from '../../lib/errors.ts';
import { jsonTextResponse } from './response-finish.ts';

/** The `cursor` query parameter of every list route. */
export const cursorParam = z
  .string()
  .max(200)
  .optional()
  .describe('opaque cursor: `next_cursor` of the previous page (or follow `next` / the Link rel="next" header)');

interface CursorBody {
  o: number;
  s: string | null;
}

/** The JSON a cursor encodes, or undefined unless `cursor` is exactly the base64url of JSON (no stray characters). */
function readCursor(cursor: string): unknown {
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.toString('base64url') !== cursor) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function encodeCursor(offset: number, snapshotId: string | null): string {
  return Buffer.from(JSON.stringify({ o: offset, s: snapshotId } satisfies CursorBody)).toString('base64url');
}

/** The offset a cursor stands for (0 without one); throws 400 for a malformed cursor, 409 for another snapshot's. */
export function decodeCursor(cursor: string | undefined, snapshotId: string | null): number {
  if (!cursor) return 0;
  const body = readCursor(cursor) as CursorBody | undefined;
  if (!body || typeof body !== 'object' || !Number.isInteger(body.o) || body.o < 0)
    throw new InvalidInputError("'cursor' is not a cursor of this API", { response: { parameter: 'cursor' } });
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
  const k = (readCursor(cursor) as { k?: unknown } | undefined)?.k;
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
export function nextCursorOf(offset: number, returned: number, total: number, snapshotId: string | null): string | null {
  return returned > 0 && offset + returned < total ? encodeCursor(offset + returned, snapshotId) : null;
}

/**
 * Cursors of answers that hold several lists (search: companies, people, events): one offset per list, within one
 * snapshot. Following `next` walks every list at once (each page holds the next `limit` rows of every list that has
 * rows left); a route that lets the client pick one list (`category`) issues cursors naming that list alone. A
 * cursor naming other lists than the request's is a 400 naming `cursor`; another snapshot's a 409.
 */
export function encodeOffsetsCursor(offsets: Record<string, number>, snapshotId: string | null): string {
  return Buffer.from(JSON.stringify({ m: offsets, s: snapshotId })).toString('base64url');
}

/** The offset of every list in `lists` (all 0 without a cursor); 400 / 409 as decodeCursor. */
export function decodeOffsetsCursor(
  cursor: string | undefined,
  snapshotId: string | null,
  lists: readonly string[],
): Record<string, number> {
  if (!cursor) return Object.fromEntries(lists.map((l) => [l, 0]));
  const body = (readCursor(cursor) ?? {}) as { m?: unknown; s?: unknown };
  const m = body?.m as Record<string, unknown> | undefined;
  const keys = m && typeof m === 'object' ? Object.keys(m).sort() : [];
  if (keys.join(',') !== [...lists].sort().join(',') || !keys.every((k) => Number.isInteger(m![k]) && (m![k] as number) >= 0))
    throw new InvalidInputError("'cursor' is not a cursor of this list", { response: { parameter: 'cursor' } });
  if ((body.s ?? null) !== snapshotId)
    throw new ConflictError('the snapshot changed since this cursor was issued: start again from the first page', {
      response: { parameter: 'cursor', snapshot_id: snapshotId },
    });
  return m as Record<string, number>;
}

/** `next_cursor` after a page of several lists: each list's offset moved past its returned rows; null when none has more. */
export function nextOffsetsCursorOf(
  lists: Record<string, { offset: number; returned: number; total: number }>,
  snapshotId: string | null,
): string | null {
  // A list that returned nothing is done, whatever its count says: a walk never asks for the same rows twice.
  const next = Object.fromEntries(
    Object.entries(lists).map(([k, l]) => [k, l.returned > 0 ? Math.min(l.offset + l.returned, l.total) : l.total]),
  );
  return Object.entries(lists).some(([k]) => next[k]! < lists[k]!.total) ? encodeOffsetsCursor(next, snapshotId) : null;
}

/** The absolute URL (on `baseUrl`) of the request with `cursor` set (and `offset` dropped). */
function pageUrl(event: H3Event, baseUrl: string, cursor: string): string {
  const u = new URL(event.url.href);
  u.searchParams.delete('offset');
  u.searchParams.set('cursor', cursor);
  return `${baseUrl.replace(/\/$/, '')}${u.pathname}${u.search}`;
}

/**
 * The HTTP answer of a page: the body with `next` (absolute URL of the next page on `baseUrl`, PUBLIC_BASE_URL, or
 * null on the last page), and the Link header when there is a next page.
 */
export function pagedResponse(event: H3Event, page: { next_cursor: string | null } & Record<string, unknown>, baseUrl: string): Response {
  const next = page.next_cursor ? pageUrl(event, baseUrl, page.next_cursor) : null;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (next) headers.link = `<${next}>; rel="next"`;
  return jsonTextResponse(JSON.stringify(withMembers(page, { next })), { status: 200, headers });
}
