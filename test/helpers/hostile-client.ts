/**
 * Hostile HTTP clients for chaos suites and bench/hostile-writers.ts: a huge
 * body (declared or chunked), a slow sender, idle connections, and the
 * server's resident memory read from /proc.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';

export interface HostileAnswer {
  status: number | null;
  body: string;
  /** Bytes the client managed to write before the server answered or closed. */
  sent: number;
  error: string | null;
}

/**
 * POSTs up to `totalBytes` of JSON-looking filler to `url`, in 64 KB chunks,
 * with a Content-Length (declared) or chunked; stops writing as soon as the
 * server answers or closes.
 */
export function sendHugeBody(url: string, totalBytes: number, opts: { declared: boolean }): Promise<HostileAnswer> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    chunk[0] = 0x5b; // '['
    let sent = 0;
    let done = false;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.declared) headers['content-length'] = String(totalBytes);
    const req = http.request(url, { method: 'POST', headers, agent: false });
    const finish = (a: Omit<HostileAnswer, 'sent'>) => {
      if (done) return;
      done = true;
      resolve({ ...a, sent });
    };
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => finish({ status: res.statusCode ?? null, body, error: null }));
      res.on('error', (e) => finish({ status: res.statusCode ?? null, body, error: e.message }));
    });
    req.on('error', (e) => finish({ status: null, body: '', error: e.message }));
    const pump = () => {
      while (!done && sent < totalBytes) {
        const n = Math.min(chunk.length, totalBytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      if (!done) req.end();
    };
    pump();
  });
}

/** Sends a request's headers and then one body byte every `everyMs` until the server answers or closes. */
export function sendSlowBody(url: string, everyMs: number): Promise<{ status: number | null; closed: boolean }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    let data = '';
    const timer = setInterval(() => s.write(' '), everyMs);
    s.on('connect', () =>
      s.write(`POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`),
    );
    s.on('data', (d) => (data += String(d)));
    const end = () => {
      clearInterval(timer);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      resolve({ status: m ? Number(m[1]) : null, closed: true });
    };
    s.on('close', end);
    s.on('error', () => undefined);
  });
}

/** Opens `n` TCP connections that never send anything; resolves with them once all are connected. */
export async function openIdleConnections(url: string, n: number): Promise<net.Socket[]> {
  const u = new URL(url);
  const sockets: net.Socket[] = [];
  const batch = 200;
  for (let i = 0; i < n; i += batch) {
    await Promise.all(
      Array.from(
        { length: Math.min(batch, n - i) },
        () =>
          new Promise<void>((resolve, reject) => {
            const s = net.connect({ host: u.hostname, port: Number(u.port) });
            s.on('error', () => undefined);
            s.once('connect', () => {
              sockets.push(s);
              resolve();
            });
            s.once('error', reject);
          }),
      ),
    );
  }
  return sockets;
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}
