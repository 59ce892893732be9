/**
 * The node:http request listener of the server: hot /api GETs answered by
 * the API layer's cache (ApiLayer.answerFromCache) straight on the socket,
 * everything else handed to h3 (`toNodeHandler(app)`).
 *
 * Why: a cache hit through srvx and h3 costs about 2.5x a bare node:http
 * response here, and issue 7 asks for at least half the bare throughput on
 * /api/company/{ticker}. The hot answer is built by the same function the h3
 * middleware calls for its own cache hits, so both transports give the same
 * status, headers and bytes.
 *
 * Only origin-form request targets are considered. A raw target is used as the
 * cache key as is: cache keys are URL-normalised paths (fixed points of the
 * normalisation), so a raw target that hits one is already normal; any other
 * spelling misses and goes through h3, which normalises it.
 */
import type { IncomingHttpHeaders, RequestListener, ServerResponse } from 'node:http';
import { toNodeHandler, type H3 } from 'h3';
import type { Logger } from '../lib/log.ts';
import type { ApiLayer, LayerRequest, LayerResponse } from './cache/api-layer.ts';

function writeLayerResponse(res: ServerResponse, r: LayerResponse): void {
  const body = r.body;
  if (typeof body === 'string') {
    r.headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(r.status, r.headers);
    res.end(body);
  } else if (body instanceof Uint8Array) {
    r.headers['content-length'] = String(body.byteLength);
    res.writeHead(r.status, r.headers);
    res.end(body);
  } else {
    res.writeHead(r.status, r.headers);
    res.end();
  }
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
    url: string,
    readonly ip: string | undefined,
  ) {
    const q = url.indexOf('?');
    this.pathname = q < 0 ? url : url.slice(0, q);
    this.search = q < 0 ? '' : url.slice(q);
  }

  header(name: string): string | undefined {
    return this.headers[name] as string | undefined;
  }
}

/** The listener: `layer` hot path first (GET /api/… only), then h3. */
export function createNodeListener(app: H3, layer: ApiLayer | undefined, log: Logger): RequestListener {
  const h3 = toNodeHandler(app) as RequestListener;
  return (req, res) => {
    const url = req.url;
    if (layer && req.method === 'GET' && url !== undefined && url.startsWith('/api/')) {
      let hot: ReturnType<ApiLayer['answerFromCache']>;
      try {
        hot = layer.answerFromCache(new NodeLayerRequest(req.headers, url, req.socket.remoteAddress));
      } catch (err) {
        // Nothing was counted (answerFromCache throws only before metering): let h3 answer.
        log.warn({ err }, 'hot path failed; answering through h3');
        hot = null;
      }
      if (hot) {
        if (hot instanceof Promise) {
          hot.then((r) => writeLayerResponse(res, r), (err) => {
            log.error({ err }, 'hot path failed after metering');
            writeLayerResponse(res, { status: 503, headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' }, body: JSON.stringify({ error: 'temporarily unavailable, retry', status: 503 }) });
          });
        } else {
          writeLayerResponse(res, hot);
        }
        return;
      }
    }
    void h3(req, res);
  };
}
