/**
 * A TCP proxy on a loopback port in front of a real server (PostgreSQL), that
 * a test can take down (listener closed, every connection cut: clients see
 * ECONNRESET, then ECONNREFUSED) and bring back on the same port: the outage
 * a database restart gives its clients, without stopping a server other
 * suites share.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const listen = async () => {
    server = net.createServer((client) => {
      const upstream = net.connect(targetPort, targetHost);
      sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server!.address() as net.AddressInfo).port;
  };
  await listen();
  const down = async () => {
    const s = server;
    server = null;
    for (const sock of sockets) sock.destroy();
    sockets.clear();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  };
  return {
    get port() {
      return port;
    },
    down,
    up: listen,
    close: down,
  };
}
