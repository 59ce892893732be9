/**
 * A local fake EDGAR (data.sec.gov + www.sec.gov on one 127.0.0.1 port) that
 * replays files from an EDGAR-shaped folder: `../shared/fixtures/sec` or a
 * generated sample's `<input>/sec`. Paths served:
 *
 *   /submissions/CIK##########.json            → <root>/submissions/…
 *   /api/xbrl/companyfacts/CIK##########.json  → <root>/companyfacts/…
 *   /files/company_tickers_exchange.json       → <root>/tickers/company_tickers_exchange.json
 *
 * Anything else (or a missing file) is 404. Every request is recorded (path,
 * time, status); `failures` makes a path answer 503 (or any status and body,
 * e.g. the SEC's 403 rate-limit page) its first N times, to exercise retries. Used by the operations tests and the workers
 * benchmark; never touches the network.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface FakeEdgarHit {
  path: string;
  at: number;
  status: number;
  userAgent: string | undefined;
}

export interface FakeEdgar {
  baseUrl: string;
  hits: FakeEdgarHit[];
  /** Requests per path. */
  count(p: string): number;
  close(): Promise<void>;
}

export async function startFakeEdgar(
  root: string,
  opts: { failures?: Record<string, { times: number; status?: number; body?: string }> } = {},
): Promise<FakeEdgar> {
  const hits: FakeEdgarHit[] = [];
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0]!;
    const n = (seen.get(p) ?? 0) + 1;
    seen.set(p, n);
    const hit: FakeEdgarHit = { path: p, at: Date.now(), status: 200, userAgent: req.headers['user-agent'] };
    hits.push(hit);
    const send = (status: number, body: string | Buffer) => {
      hit.status = status;
      res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'text/plain' }).end(body);
    };
    const fail = opts.failures?.[p];
    if (fail && n <= fail.times) return send(fail.status ?? 503, fail.body ?? 'service unavailable');
    const sub = /^\/submissions\/(CIK\d{10}(?:-submissions-\d{3})?\.json)$/.exec(p);
    const facts = /^\/api\/xbrl\/companyfacts\/(CIK\d{10}\.json)$/.exec(p);
    const file = sub
      ? path.join(root, 'submissions', sub[1]!)
      : facts
        ? path.join(root, 'companyfacts', facts[1]!)
        : p === '/files/company_tickers_exchange.json'
          ? path.join(root, 'tickers', 'company_tickers_exchange.json')
          : null;
    if (!file) return send(404, 'not found');
    readFile(file).then(
      (b) => send(200, b),
      () => send(404, 'not found'),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    count: (p) => hits.filter((h) => h.path === p).length,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
