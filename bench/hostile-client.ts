/**
 * Hostile HTTP clients for test/chaos/ and bench/hostile.bench.ts: a huge
 * body (declared or chunked), a slow sender, idle connections, and the
 * server's resident memory read from /proc.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import readline from 'node:readline';

export interface HostileAnswer {
  status: number | null;
  body: string;
  /** Bytes the client managed to write before the server answered or closed. */
  sent: number;
  error: string | null;
}

/**
 * POSTs up to `totalBytes` of JSON-looking filler to `url`, in 64 KB chunks,
 * with a Content-Length (declared: the body starts one second after the
 * headers, unless the server answered first) or chunked; stops writing as
 * soon as the server answers or closes.
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
    if (!opts.declared) return pump();
    // A declared length is judged from the headers alone: send them and give the server a second to answer before
    // writing (an early answer, RFC 9110 §15.5.14, as a client sending Expect: 100-continue waits for one). Writing at
    // once raced the server's answer-and-close: the client could see EPIPE/ECONNRESET before reading the 413.
    req.flushHeaders();
    setTimeout(pump, 1000).unref();
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

/** Connections `holdIdleConnections` opens at once: far below the server's listen backlog (4,096). */
export const IDLE_BATCH = 500;

/** What `holdIdleConnections` reports: connections open now, closed by the server, the most open at once, refused. */
export interface IdleReport {
  opened: number;
  open: number;
  closed: number;
  peak: number;
  failed: number;
  /** Milliseconds from the first connect to the last one settled (null until all have). */
  open_ms: number | null;
}

/**
 * Opens `n` TCP connections that never send a byte (500 connecting at a time) and keeps them until the server
 * closes them, calling `report` on every change of state (at most every 250 ms) and once all have settled.
 * Resolves once every connection has been closed or refused.
 */
export async function holdIdleConnections(
  url: string,
  n: number,
  report: (r: IdleReport) => void,
  /**
   * Awaited before each batch of IDLE_BATCH but the first (the test: until the server has accepted the batch before),
   * so that the server's accept queue never fills: a handshake that finds it full completes only when the kernel's
   * SYN-ACK retransmissions happen to find room, while a silent client already counts the connection as open.
   */
  beforeBatch?: () => Promise<void>,
): Promise<IdleReport> {
  const u = new URL(url);
  const r: IdleReport = { opened: 0, open: 0, closed: 0, peak: 0, failed: 0, open_ms: null };
  const t0 = performance.now();
  let allClosed: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allClosed = resolve));
  const settle = () => {
    if (r.closed + r.failed === n) allClosed();
  };
  const timer = setInterval(() => report({ ...r }), 250);
  for (let i = 0; i < n; i += IDLE_BATCH) {
    if (i > 0 && beforeBatch) {
      report({ ...r });
      await beforeBatch();
    }
    await Promise.all(
      Array.from(
        { length: Math.min(IDLE_BATCH, n - i) },
        () =>
          new Promise<void>((resolve) => {
            const s = net.connect({ host: u.hostname, port: Number(u.port) });
            // Flowing, so the server's FIN is read and ends the socket (a paused one can sit in CLOSE-WAIT for ever).
            s.resume();
            let connected = false;
            s.once('connect', () => {
              connected = true;
              r.opened++;
              r.open++;
              r.peak = Math.max(r.peak, r.open);
              resolve();
            });
            s.on('error', () => undefined);
            s.once('close', () => {
              if (connected) {
                r.open--;
                r.closed++;
              } else {
                r.failed++;
                resolve();
              }
              settle();
            });
          }),
      ),
    );
  }
  r.open_ms = Math.round(performance.now() - t0);
  report({ ...r });
  await done;
  clearInterval(timer);
  report({ ...r });
  return r;
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * `node --import tsx bench/hostile-client.ts <url> <control|unhashable|huge> <clients>`: a hostile writer in its own
 * process (so the bench's honest clients do not share its CPU), repeating until SIGTERM, then printing the
 * answers' statuses as JSON on stdout.
 */
/**
 * `node --import tsx bench/hostile-client.ts <url> idle <n> [paced]`: holds `n` idle connections (test/chaos: the
 * server's sockets and the client's in separate processes, each under its own descriptor limit), printing an
 * IdleReport JSON line on every change, until the server has closed them all. `paced`: each batch after the first
 * waits for a line on stdin.
 */
if (import.meta.url === `file://${process.argv[1]}` && process.argv[3] === 'idle') {
  let last = '';
  const lines = process.argv[5] === 'paced' ? readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]() : null;
  const final = await holdIdleConnections(
    process.argv[2]!,
    Number(process.argv[4]),
    (r) => {
      const line = JSON.stringify(r);
      if (line !== last) process.stdout.write(`${line}\n`);
      last = line;
    },
    lines
      ? async () => {
          await lines.next();
        }
      : undefined,
  );
  process.exit(final.failed > 0 ? 1 : 0);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const [url, kind, clients] = process.argv.slice(2) as [string, string, string];
  const counts: Record<string, number> = {};
  let stop = false;
  process.on('SIGTERM', () => (stop = true));
  const surrogate = `{"stage":"IN_TRANSIT","actor":"x","evidence":{"note":"\\ud800"}}`;
  const deep = `{"stage":"IN_TRANSIT","actor":"x","evidence":${'['.repeat(3000)}${']'.repeat(3000)}}`;
  let flip = 0;
  const one = async (): Promise<string> => {
    if (kind === 'control') {
      // A cheap valid request at the same concurrency: what any client costs, to compare the hostile ones with.
      const r = await fetch(url.replace(/\/api\/.*$/, '/api/no-such-route'));
      await r.text();
      return String(r.status);
    }
    if (kind === 'huge') {
      const a = await sendHugeBody(url, 100 * 1024 * 1024, { declared: false });
      return String(a.status ?? (a.error?.split(':')[0] || 'no answer'));
    }
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: flip++ % 2 ? surrogate : deep });
    await r.text();
    return String(r.status);
  };
  await Promise.all(
    Array.from({ length: Number(clients) }, async () => {
      while (!stop) {
        const s = await one().catch((e: Error) => e.message);
        counts[s] = (counts[s] ?? 0) + 1;
      }
    }),
  );
  process.stdout.write(JSON.stringify(counts));
}
