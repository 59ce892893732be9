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
import type { IncomingMessage } from 'node:http';
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

/**
 * The node:http request behind a request of the node listener (srvx's `runtime.node.req`), when nothing has read
 * its body yet: no data listener, not flowing, not ended. Undefined for any other request (tests' web Requests,
 * a body already turned into a web stream), which then takes the web stream path.
 */
function untouchedIncoming(req: Request): IncomingMessage | undefined {
  const incoming = (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
  if (!incoming || incoming.readableFlowing !== null || incoming.readableEnded || incoming.listenerCount('data') > 0) return undefined;
  return incoming;
}

/**
 * Reads a node:http request body straight from its stream, under the same limit as the web path: past the limit
 * the stream is paused (nothing more is read; the 413 closes the connection). This skips the web ReadableStream
 * srvx would build for `req.body` (`Readable.toWeb`, whose construction was about 4.5 % of the server's CPU for
 * MCP calls under load: docs/benchmarks-history.md).
 */
function readIncoming(incoming: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const settle = (err?: unknown): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
      if (err !== undefined) reject(err);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total > limit) {
        incoming.pause();
        settle(tooLarge(limit, `of more than ${total} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle();
    const onError = (e: Error): void => settle(e);
    const onClose = (): void => {
      if (!incoming.complete) settle(new Error('the client closed the connection before the request body ended'));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/** The body's bytes, at most `limit` of them (PayloadTooLargeError past it, before more is read). */
export async function readBodyBytes(req: Request, limit: number): Promise<Uint8Array> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit, `of ${declared} bytes (Content-Length)`);
  if (req.method === 'GET' || req.method === 'HEAD') return new Uint8Array(0);
  const incoming = untouchedIncoming(req);
  if (incoming) return readIncoming(incoming, limit);
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
