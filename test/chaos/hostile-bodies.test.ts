/**
 * Chaos: hostile bodies and connections against a real server process
 * (issue 25). A 100 MB body (declared or chunked) is refused with 413 naming
 * the limit after at most the limit is read, eight at once raise the
 * server's RSS by a bounded amount; a slow sender gets 408 once the request
 * timeout passes; 2,000 idle connections do not stop the server answering,
 * and SIGTERM still exits cleanly (code 0, not the 30 s drain bound's 1) with
 * them and a busy keep-alive client attached. The 10,000 idle
 * connections, held by a process of their own: idle-connections.test.ts.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/env.ts';
import { openIdleConnections, rssOf, sendHugeBody, sendSlowBody } from '../../bench/hostile-client.ts';
import { exited, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const MB = 1024 * 1024;

describe('chaos: hostile bodies and connections', () => {
  let dir: string;
  let server: ServerProcess;
  beforeAll(async () => {
    dir = await tempDir();
    server = await startServerProcess(dir, { HTTP_REQUEST_TIMEOUT_MS: '2000', RATE_LIMIT_FREE_PER_HOUR: '1000000' });
  }, 180_000);
  afterAll(async () => {
    if (server.proc.exitCode === null) {
      server.proc.kill('SIGKILL');
      await exited(server.proc);
    }
    await removeDir(dir);
  });

  it('refuses a declared 100 MB body with 413 naming the limit, before reading it', async () => {
    const a = await sendHugeBody(`${server.url}/api/care`, 100 * MB, { declared: true });
    expect(a.status).toBe(413);
    expect(a.sent).toBe(0); // answered from the headers, before the client wrote a byte of the body
    expect(JSON.parse(a.body)).toMatchObject({ status: 413, parameter: 'body', limit_bytes: MB });
    expect(JSON.parse(a.body).error).toMatch(/limit of 1 MB/);
  });

  it('refuses a chunked 100 MB body once it passes the limit, and eight at once keep RSS bounded', async () => {
    const pid = server.proc.pid!;
    const before = rssOf(pid);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => sendHugeBody(`${server.url}/api/vet`, 100 * MB, { declared: false })),
    );
    const after = rssOf(pid);
    for (const a of answers) {
      // The server answers 413 and closes; a client still writing may see the close (EPIPE/ECONNRESET) instead.
      if (a.status !== null) expect(a.status).toBe(413);
      else expect(a.error).toMatch(/EPIPE|ECONNRESET|socket hang up/);
      expect(a.sent).toBeLessThan(100 * MB);
    }
    // Eight bodies of 100 MB held whole would be 800 MB (1.1 GB was measured before the limit): stay far below.
    expect(after - before).toBeLessThan(100 * MB);
  });

  it('answers a slow sender 408 once the request timeout passes', async () => {
    const r = await sendSlowBody(`${server.url}/api/care`, 200);
    expect(r.status).toBe(408);
  }, 20_000);

  it('keeps answering with 2,000 idle connections open, and SIGTERM exits 0 with them and a busy keep-alive client', async () => {
    const idle = await openIdleConnections(server.url, 2000);
    const health = await fetch(`${server.url}/api/health`);
    expect(health.status).toBe(200);
    // A keep-alive client sending requests back to back.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let busy = true;
    const loop = (async () => {
      while (busy) {
        await new Promise<void>((resolve) => {
          const req = http.get(`${server.url}/api/health`, { agent }, (res) => {
            res.resume();
            res.on('end', resolve);
          });
          req.on('error', () => {
            busy = false;
            resolve();
          });
        });
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    server.proc.kill('SIGTERM');
    await exited(server.proc);
    busy = false;
    await loop;
    agent.destroy();
    for (const s of idle) s.destroy();
    expect(server.proc.exitCode).toBe(0);
  }, 180_000);
});
