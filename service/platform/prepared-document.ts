/**
 * A document a route serves from memory as prepared bytes (GET /openapi.json, 344 KB): its text, UTF-8 bytes,
 * weak ETag and compressed forms, each computed once. The route answers `documentResponse()`; the API layer
 * (api-middleware.ts) recognises it and finishes the answer from these bytes, so a request neither decodes the
 * body back to text, nor compares it with the last one, nor encodes it again (issue 22: those three held
 * /openapi.json to 392 req/s at full scale). The answer is the one the layer gives any other document: same
 * status, headers (ETag, Vary, CORS, cache-control), conditional GET and compression negotiation, same bytes.
 */
import { FastResponse } from 'srvx';
import { compressText } from './response-finish.ts';
import { etagOf } from './response-cache.ts';

const kPrepared = Symbol('proofline.preparedDocument');

export class PreparedDocument {
  /** The text as UTF-8, sent as is to a client that accepts no compression. */
  readonly bytes: Uint8Array;
  /** The weak ETag over the text (response-cache.ts `etagOf`, as the layer tags every document). */
  readonly etag: string;
  private readonly encoded = new Map<'br' | 'gzip', Uint8Array>();

  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {
    const b = Buffer.from(text);
    this.bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    this.etag = etagOf(text);
  }

  /** The text compressed with `enc` (response-finish.ts `compressText`), once per encoding (a bound function: finish()'s `compress`). */
  readonly compressed = (enc: 'br' | 'gzip'): Uint8Array => {
    let bytes = this.encoded.get(enc);
    if (!bytes) this.encoded.set(enc, (bytes = compressText(enc, this.text)));
    return bytes;
  };

  /**
   * The route's Response: the bytes with their content type and no other header (a plain answer where no API layer
   * is installed), marked as this document. srvx's FastResponse holds the bytes as they are (a web Response copies a
   * typed array body: 344 KB a request).
   */
  response(): Response {
    const res = new FastResponse(this.bytes, { headers: { 'content-type': this.contentType } }) as unknown as Response;
    (res as unknown as Record<symbol, PreparedDocument>)[kPrepared] = this;
    return res;
  }
}

/** The prepared document behind a route's answer, or undefined for any other value. */
export function preparedDocumentOf(val: unknown): PreparedDocument | undefined {
  return typeof val === 'object' && val !== null ? (val as Record<symbol, PreparedDocument | undefined>)[kPrepared] : undefined;
}
