/** A local webhook receiver on loopback: records every request; `answer` decides each status. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  origin: string;
  received: Received[];
  answer: (n: number, r: Omit<Received, 'status'>) => number;
  close(): Promise<void>;
}

export async function startReceiver(answer: Receiver['answer'] = () => 200): Promise<Receiver> {
  const rec: Receiver = { url: '', origin: '', received: [], answer, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const status = rec.answer(rec.received.length + 1, r);
      rec.received.push({ ...r, status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  rec.origin = `http://127.0.0.1:${port}`;
  rec.url = `${rec.origin}/hooks/proofline`;
  rec.close = () => new Promise<void>((r) => server.close(() => r()));
  return rec;
}
