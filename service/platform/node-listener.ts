/**
 * The node:http request listener of the server: hot /api GETs answered by
 * the API layer's cache (ApiLayer.answerFromCache) straight on the socket,
 * everything else run through h3 (`app.fetch` over srvx's `NodeRequest`).
 *
 * Why: a cache hit through srvx and h3 costs about 2.5x a bare node:http
 * response here, and issue 7 asks for at least half the bare throughput on
 * /api/company/{ticker}. The hot answer is built by the same function the h3
 * middleware calls for its own cache hits, so both transports give the same
 * status, headers and bytes.
 *
 * Writing: a hot answer of the byte path (`HotAnswer`) is written as one
 * buffer, status line, headers and body, with one `end` (`writeHotAnswer`,
 * issue 22 item 5: the same bytes as writeHead + end without node validating
 * and concatenating every header line); every other answer the API layer
 * finished (hot or through h3) is written `writeHead(status, headers object)`
 * then `end(body)`; only other responses (streams: MCP, files) go through
 * srvx's `sendNodeResponse`. Few write patterns keep node's own http and
 * stream functions monomorphic: with h3's misses written by srvx (raw header
 * arrays, `write` then `end`) the hot answers ran about 1.2x slower in the
 * same process (measured A/B).
 *
 * Only origin-form request targets are considered. A raw target is used as the
 * cache key as is: cache keys are URL-normalised paths (fixed points of the
 * normalisation), so a raw target that hits one is already normal; any other
 * spelling misses and goes through h3, which normalises it.
 */
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { H3 } from 'h3';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import type { Logger } from '../../lib/log.ts';
import { isTransientBody, releaseBody, releaseTransientBody } from './bytes.ts';
import { HotAnswer } from './hot-path.ts';
import { layerResponseOf, type HotAnswerer, type LayerRequest, type LayerResponse } from './response-finish.ts';

/** How long an idle keep-alive connection stays open (node `keepAliveTimeout`). */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How long a client has to send its request headers (node `headersTimeout`) by default (HTTP_HEADERS_TIMEOUT_MS). */
export const HEADERS_TIMEOUT_MS = 10_000;

/**
 * The server's deliberate timeouts (docs/limits.md): a whole request within
 * `requestTimeoutMs` (408 and the connection closed after it), its headers
 * within `headersTimeoutMs` (at most the request timeout), both checked every
 * second (node checks every 30 s by default, which would let a slow sender
 * overstay by that much). A connection that sends nothing at all is closed
 * after the headers timeout too (ConnectionTracker).
 */
export function serverTimeouts(requestTimeoutMs: number, headersTimeoutMs = HEADERS_TIMEOUT_MS): ServerOptions {
  return {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(headersTimeoutMs, requestTimeoutMs),
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: 1000,
  };
}

/**
 * Connections of a node:http server (issue 25). A connection that sends
 * nothing within the headers timeout is closed. Graceful shutdown: `drain()` stops
 * accepting, destroys every connection without a request in progress (idle
 * keep-alives, and sockets that never sent a request, which node's own
 * `closeIdleConnections` leaves open), and makes every answer still in
 * progress close its connection (`Connection: close`). Resolves once the
 * server has closed.
 */
/** A connection's requests in progress (on the socket and on each of its responses under `kConnection`). */
interface ConnectionState {
  readonly socket: Socket;
  inProgress: number;
}
const kConnection = Symbol('proofline.connection');
type WithConnection = { [kConnection]?: ConnectionState };

export class ConnectionTracker {
  private readonly active = new Set<ConnectionState>();
  private closing = false;

  constructor(private readonly server: Server) {
    server.on('connection', (s: Socket) => {
      this.track(s);
      // Node's headers timeout only watches a connection once its first byte has arrived: one that never sends
      // anything would be held open for ever (10,000 of them hold 10,000 descriptors). Such a connection is closed
      // once the headers timeout has passed; one that has sent something is left to node (408 on partial headers).
      const silent = setTimeout(() => s.bytesRead === 0 && s.destroy(), server.headersTimeout || HEADERS_TIMEOUT_MS);
      silent.unref();
      s.once('close', () => clearTimeout(silent));
    });
  }

  /** The connection's state, created with its first sight (its 'connection' event): on the socket, in `active` until it closes. */
  private track(s: Socket): ConnectionState {
    const c: ConnectionState = { socket: s, inProgress: 0 };
    (s as WithConnection)[kConnection] = c;
    this.active.add(c);
    s.once('close', () => this.active.delete(c));
    return c;
  }

  /**
   * Wraps the request listener to count requests in progress per connection: a counter on the socket's state
   * object and one shared 'close' handler per response (the state kept on the response: node detaches the
   * socket before 'close'), so a request costs no Map lookup, closure or `once` wrapper.
   */
  wrap(listener: RequestListener): RequestListener {
    const onResponseClose = (c: ConnectionState): void => {
      c.inProgress--;
      if (this.closing && c.inProgress === 0) c.socket.destroy();
    };
    function onClose(this: ServerResponse): void {
      onResponseClose((this as WithConnection)[kConnection]!);
    }
    return (req, res) => {
      const s = req.socket;
      const c = (s as WithConnection)[kConnection] ?? this.track(s);
      c.inProgress++;
      (res as WithConnection)[kConnection] = c;
      res.on('close', onClose);
      if (this.closing) res.setHeader('connection', 'close');
      listener(req, res);
    };
  }

  async drain(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of this.active) if (c.inProgress === 0) c.socket.destroy();
    await closed;
  }
}

const UNAVAILABLE: LayerResponse = {
  status: 503,
  headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' },
  body: JSON.stringify({ error: 'temporarily unavailable, retry', status: 503 }),
};

/** Writes a finished answer: `writeHead(status, headers)` then `end(body)`, with Content-Length when the layer did not set it. */
function writeLayerResponse(res: ServerResponse, r: LayerResponse): void {
  const body = r.body;
  if (typeof body === 'string') {
    if (r.headers['content-length'] === undefined) r.headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(r.status, r.headers);
    res.end(body);
  } else if (body instanceof Uint8Array) {
    if (r.headers['content-length'] === undefined) r.headers['content-length'] = String(body.byteLength);
    res.writeHead(r.status, r.headers);
    res.end(body);
    // As for a hot answer: once every byte is with the kernel, a transient body's bytes are free (bytes.ts). A write
    // still queued (a slow reader) keeps them until the response is done or its connection gone ('close' follows
    // both, after the socket's last write has called back).
    if (res.writableLength === 0) releaseTransientBody(body);
    else if (isTransientBody(body)) res.once('close', () => releaseTransientBody(body));
  } else {
    res.writeHead(r.status, r.headers);
    res.end();
  }
}

/**
 * The fields of node's ServerResponse (lib/_http_outgoing.js, lib/_http_server.js, node 20) that decide what
 * `writeHead` + `end` add to the caller's headers: Date (`sendDate`), and Connection + Keep-Alive when the
 * connection is kept alive (`_storeHeader`). Not public API: `writeHotAnswer` reads them to know that node would
 * add exactly the lines it writes itself, and falls back to writeHead otherwise.
 */
interface ResponseState {
  _header: string | null;
  _headerSent: boolean;
  _hasBody: boolean;
  _removedConnection: boolean;
  _defaultKeepAlive: boolean;
  _keepAliveTimeout: number;
  _maxRequestsPerSocket: number | undefined;
  _expect_continue: boolean;
  maxRequestsOnConnectionReached: boolean;
  shouldKeepAlive: boolean;
  chunkedEncoding: boolean;
  sendDate: boolean;
}

/** What `_header` holds once a hot answer has written its own: node only tests it (headersSent, a second writeHead throws). */
const WRITTEN_WITH_BODY = 'HTTP/1.1 (status line and headers written with the body by writeHotAnswer)\r\n\r\n';

let tailSecond = -1;
let tailTimeout = -1;
let tailBytes: Buffer = Buffer.alloc(0);
/**
 * The lines node's `_storeHeader` appends to a kept-alive response's headers, and the blank line: `Date` (node's
 * `utcDate()`: `new Date().toUTCString()`, kept for the second), `Connection: keep-alive` and `Keep-Alive:
 * timeout=<s>`. The same bytes for every answer within a second.
 */
function keepAliveTail(nowMs: number, keepAliveMs: number): Buffer {
  const second = Math.floor(nowMs / 1000);
  if (second !== tailSecond || keepAliveMs !== tailTimeout) {
    tailSecond = second;
    tailTimeout = keepAliveMs;
    tailBytes = Buffer.from(
      `Date: ${new Date(nowMs).toUTCString()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n\r\n`,
      'latin1',
    );
  }
  return tailBytes;
}

/**
 * Writes a hot answer as one buffer (status line, headers, body: `HotAnswer.wire`) with a single `end`, instead
 * of `writeHead` (which validates and concatenates every header line as a string, then writes it beside the body).
 * Only for the ordinary case, where node would add exactly Date, Connection: keep-alive and Keep-Alive: a request
 * that closes its connection, a header set on the response beforehand (the drain's Connection: close), a HEAD,
 * or any other state returns false, and the caller writes the answer with writeHead. The bytes are those of
 * writeHead + end (test/api/hot-path.test.ts compares them on a real server).
 */
export function writeHotAnswer(res: ServerResponse, answer: HotAnswer): boolean {
  const r = res as unknown as ResponseState;
  if (
    r._header !== null ||
    r.shouldKeepAlive !== true ||
    r.sendDate !== true ||
    r._defaultKeepAlive !== true ||
    r._removedConnection ||
    r.maxRequestsOnConnectionReached ||
    (r._maxRequestsPerSocket ?? 0) > 0 ||
    r._expect_continue ||
    r._hasBody !== true ||
    r.chunkedEncoding ||
    typeof r._keepAliveTimeout !== 'number' ||
    r._keepAliveTimeout <= 0 ||
    res.hasHeader('connection')
  )
    return false;
  const wire = answer.wire(keepAliveTail(Date.now(), r._keepAliveTimeout));
  res.statusCode = answer.status;
  r._header = WRITTEN_WITH_BODY;
  r._headerSent = true;
  res.end(wire);
  // Nothing left in node or libuv (`writableLength` counts the response's own queue and its socket's, the latter
  // until the write completes): `end` wrote every byte to the kernel synchronously, so the buffer's bytes are free.
  // A pipelined answer waiting for its socket, or a partial write, keeps them (writableLength > 0).
  if (res.writableLength === 0) releaseBody(wire);
  return true;
}

/**
 * A node:http request as the API layer sees it. A class, not an object literal
 * with an arrow function: the TypeScript loader (tsx, esbuild keepNames) wraps
 * every function expression in `__name(fn)`, an Object.defineProperty call
 * per request that also sends the closure's map down a slow path.
 */
class NodeLayerRequest implements LayerRequest {
  readonly method = 'GET';
  readonly pathname: string;
  readonly search: string;
  constructor(
    private readonly headers: IncomingHttpHeaders,
    /** The raw request target, used as the cache key as is (see the module comment). */
    readonly target: string,
    readonly ip: string | undefined,
  ) {
    const q = target.indexOf('?');
    this.pathname = q < 0 ? target : target.slice(0, q);
    this.search = q < 0 ? '' : target.slice(q);
  }

  header(name: string): string | undefined {
    return this.headers[name] as string | undefined;
  }
}

/**
 * Runs a request through h3 and writes its response: the API layer's finished
 * answer as one `end(body)`, anything else (a stream) with srvx. An error
 * after the handler (a broken stream) ends the response; h3 itself turns
 * handler errors into responses.
 */
function answerThroughApp(app: H3, req: IncomingMessage, res: ServerResponse, log: Logger): void {
  let pending: Promise<Response>;
  try {
    pending = Promise.resolve(app.fetch(new NodeRequest({ req, res }) as unknown as Request));
  } catch (err) {
    pending = Promise.reject(err); // a synchronous throw must not escape the listener (it would crash the process)
  }
  pending
    .then((webRes) => {
      const done = layerResponseOf(webRes);
      const body = done?.body;
      if (done && (body === null || typeof body === 'string' || body instanceof Uint8Array)) return writeLayerResponse(res, done);
      return sendNodeResponse(res, webRes);
    })
    .catch((err: unknown) => {
      log.error({ err }, 'response failed');
      if (!res.headersSent) writeLayerResponse(res, { ...UNAVAILABLE, headers: { ...UNAVAILABLE.headers } });
      else res.destroy();
    });
}

/** The listener: `layer` hot path first (GET /api/… only), then h3. */
export function createNodeListener(app: H3, layer: HotAnswerer | undefined, log: Logger): RequestListener {
  return (req, res) => {
    const url = req.url;
    if (layer && req.method === 'GET' && url?.startsWith('/api/')) {
      let hot: ReturnType<HotAnswerer['answerFromCache']>;
      try {
        hot = layer.answerFromCache(new NodeLayerRequest(req.headers, url, req.socket.remoteAddress));
      } catch (err) {
        // Nothing was counted (answerFromCache throws only before metering): let h3 answer.
        log.warn({ err }, 'hot path failed; answering through h3');
        hot = null;
      }
      if (hot) {
        if (hot instanceof Promise) {
          hot.then(
            (r) => writeLayerResponse(res, r),
            (err) => {
              log.error({ err }, 'hot path failed after metering');
              writeLayerResponse(res, { ...UNAVAILABLE, headers: { ...UNAVAILABLE.headers } });
            },
          );
        } else if (!(hot instanceof HotAnswer && writeHotAnswer(res, hot))) {
          writeLayerResponse(res, hot);
        }
        return;
      }
    }
    answerThroughApp(app, req, res, log);
  };
}
