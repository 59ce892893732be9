/**
 * Request bodies of the node listener are read straight from node's request
 * stream (service/platform/body.ts), under the same limit as the web stream
 * path: the bytes as sent, one chunk or many; a chunked body past the limit is
 * a 413 naming it, before the rest is read. The request handed in has no web
 * body at all: reading `req.body` would fail the test.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../../lib/errors.ts';
import { readBodyBytes } from '../../service/platform/body.ts';

const LIMIT = 64 * 1024;
let server: http.Server;
let url: string;

/** The request as srvx's node adapter hands it over: headers, method and the node request under runtime.node. */
function srvxLike(req: http.IncomingMessage): Request {
  return {
    method: req.method,
    headers: new Headers(req.headers as Record<string, string>),
    runtime: { node: { req } },
    get body(): never {
      throw new Error('the web body stream was built');
    },
  } as unknown as Request;
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    readBodyBytes(srvxLike(req), LIMIT).then(
      (bytes) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.from(bytes));
      },
      (e: unknown) => {
        res.writeHead(e instanceof PayloadTooLargeError ? 413 : 500, { connection: 'close' });
        res.end(e instanceof Error ? e.message : String(e));
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function post(chunks: Buffer[], declared: boolean): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const req = http.request(url, { method: 'POST', headers: declared ? { 'content-length': String(total) } : {} }, (res) => {
      const got: Buffer[] = [];
      res.on('data', (c: Buffer) => got.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(got) }));
    });
    req.on('error', reject);
    (async () => {
      for (const c of chunks) {
        if (req.destroyed) return;
        req.write(c);
        await new Promise((r) => setImmediate(r));
      }
      req.end();
    })();
  });
}

describe('request bodies read from node:http', () => {
  it('returns the bytes as sent, in one chunk or many, declared or chunked', async () => {
    const one = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}');
    expect((await post([one], true)).body.equals(one)).toBe(true);
    const parts = Array.from({ length: 7 }, (_, i) => Buffer.alloc(5000 + i, 97 + i));
    const many = await post(parts, false);
    expect(many.status).toBe(200);
    expect(many.body.equals(Buffer.concat(parts))).toBe(true);
    const empty = await post([], true);
    expect([empty.status, empty.body.length]).toEqual([200, 0]);
  });

  it('refuses a chunked body once it passes the limit, naming the limit', async () => {
    const parts = Array.from({ length: 40 }, () => Buffer.alloc(4096, 120));
    const r = await post(parts, false).catch((e: Error) => ({ status: 0, body: Buffer.from(e.message) }));
    // The server answers 413 and closes; a client still writing may see the close instead.
    if (r.status !== 0) {
      expect(r.status).toBe(413);
      expect(r.body.toString()).toContain(`limit of ${LIMIT} bytes`);
    } else expect(r.body.toString()).toMatch(/EPIPE|ECONNRESET|socket hang up/);
  });

  it('refuses a declared length over the limit before reading', async () => {
    const r = await post([Buffer.alloc(LIMIT + 1, 120)], true).catch((e: Error) => ({ status: 0, body: Buffer.from(e.message) }));
    if (r.status !== 0) expect(r.status).toBe(413);
  });
});
