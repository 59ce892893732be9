/**
 * ConnectionTracker (service/platform/node-listener.ts): a graceful drain closes idle keep-alive connections at
 * once, lets a request in progress finish with `Connection: close`, then closes its connection, and resolves once
 * the server has closed. Real node:http server and raw sockets on loopback.
 */
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionTracker } from '../../service/platform/node-listener.ts';

/** A raw keep-alive client: sends requests, collects what arrives, knows when the server closed the socket. */
function client(port: number): Promise<{ sock: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let data = '';
    const sock = connect(port, '127.0.0.1');
    const closed = new Promise<void>((r) => sock.on('close', () => r()));
    sock.on('data', (d: Buffer) => (data += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.once('connect', () => resolve({ sock, received: () => data, closed }));
    sock.once('error', reject);
  });
}

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
};

describe('ConnectionTracker', () => {
  it('drains: idle connections close at once, a request in progress finishes with Connection: close, then its connection closes', async () => {
    let release: () => void = () => undefined;
    const server = createServer();
    const tracker = new ConnectionTracker(server);
    server.on(
      'request',
      tracker.wrap((req, res) => {
        const answer = () => {
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
          res.end('ok');
        };
        if (req.url === '/slow') release = answer;
        else answer();
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;

    const idle = await client(port);
    idle.sock.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => idle.received().endsWith('ok'));
    expect(idle.received()).toContain('Connection: keep-alive');
    const busy = await client(port);
    busy.sock.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => release.name === 'answer');

    let drained = false;
    const drain = tracker.drain().then(() => (drained = true));
    await idle.closed; // idle keep-alive: destroyed by the drain
    expect(drained).toBe(false); // the slow request is still in progress
    release();
    await busy.closed;
    await drain;
    expect(busy.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(busy.received().endsWith('ok')).toBe(true);
  });

  it('counts each response once: a connection that answered several requests is idle again, and closed by a drain', async () => {
    const server = createServer();
    const tracker = new ConnectionTracker(server);
    server.on(
      'request',
      tracker.wrap((_req, res) => {
        res.writeHead(200, { 'content-length': '1' });
        res.end('x');
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = await client((server.address() as { port: number }).port);
    c.sock.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => (c.received().match(/HTTP\/1\.1 200/g) ?? []).length === 3);
    await new Promise((r) => setTimeout(r, 20)); // every response's 'close' has run
    await tracker.drain();
    await c.closed;
  });
});
