/**
 * Request bodies read under a size limit, enforced while streaming (issue 25):
 * a declared Content-Length over the limit is refused before a byte is read,
 * and a body without one (chunked) is read until it passes the limit, then
 * the stream is cancelled. Either way the answer is 413 naming the limit, and
 * the connection is closed after it (the rest of the body is never read).
 * Memory held per request is at most the limit.
 *
 * Limits per route (docs/limits.md): DEFAULT_BODY_LIMIT for every JSON POST,
 * BATCH_BODY_LIMIT for POST /api/batch-vet, MCP_BODY_LIMIT for POST /mcp.
 */
import { InvalidInputError, PayloadTooLargeError } from '../../lib/errors.ts';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** A batch of vettings: Enterprise batches are uncapped (vetting specification, Limits), at about 60 bytes an entry. */
export const BATCH_BODY_LIMIT = 16 * 1024 * 1024;
/** The same size as the default: a JSON-RPC message with one tool call. */
export const MCP_BODY_LIMIT = 1024 * 1024;

function describeBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MB` : `${n} bytes`;
}

function tooLarge(limit: number, seen: string): PayloadTooLargeError {
  return new PayloadTooLargeError(`request body ${seen} exceeds this route's limit of ${describeBytes(limit)} (${limit} bytes)`, {
    response: { parameter: 'body', limit_bytes: limit },
  });
}

/** The body's bytes, at most `limit` of them (PayloadTooLargeError past it, before more is read). */
export async function readBodyBytes(req: Request, limit: number): Promise<Uint8Array> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit, `of ${declared} bytes (Content-Length)`);
  const stream = req.body;
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit, `of more than ${total} bytes`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The body as UTF-8 text under `limit` bytes; bytes that are not UTF-8 are a 400 naming the body. */
export async function readBodyText(req: Request, limit: number): Promise<string> {
  const bytes = await readBodyBytes(req, limit);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new InvalidInputError('request body is not valid UTF-8', { response: { parameter: 'body' } });
  }
}
