import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase, HAS_POSTGRES } from '../helpers/postgres.ts';
import type { Received } from './receiver.ts';

/**
 * A webhook sender killed with SIGKILL mid-delivery, on both state backends (issue 20): the embedded DuckDB file and
 * PostgreSQL (a fresh database on DATABASE_URL's server; skipped with a notice without one, never under
 * REQUIRE_POSTGRES=1). The contract is at-least-once (docs/monitoring.md): the receiver may see a `webhook-id` again
 * after a crash, never a second message, and never loses one.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'proofline-kill9-'));
const script = path.join(import.meta.dirname, 'sender-process.ts');
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  rmSync(dir, { recursive: true, force: true });
});

const BACKENDS = [
  { name: 'embedded DuckDB', skip: false, location: async () => path.join(dir, 'state.duckdb') },
  {
    name: 'PostgreSQL',
    skip: !HAS_POSTGRES,
    location: async () => {
      const db = await freshDatabase();
      cleanups.push(db.drop);
      return db.url;
    },
  },
];

function sender(location: string, args: string[]) {
  const proc = spawn(process.execPath, ['--import', 'tsx', script, location, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: any[] = [];
  const waiters: Array<() => void> = [];
  let buf = '';
  proc.stdout.on('data', (d) => {
    buf += String(d);
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      lines.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  const exited = new Promise<number | null>((r) => proc.on('exit', (c) => r(c)));
  const line = async (key: string) => {
    for (;;) {
      const l = lines.find((x) => key in x);
      if (l) return l[key];
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { proc, line, exited };
}

describe.each(BACKENDS)('a sender killed mid-delivery ($name state store)', (backend) => {
  it.skipIf(backend.skip)(
    'delivers the event after a restart (kill -9 while the receiver holds the request open)',
    async () => {
      const location = await backend.location();
      const received: Received[] = [];
      let hold = true;
      let arrived: () => void = () => undefined;
      const first = new Promise<void>((r) => (arrived = r));
      // The first request is held open (never answered before the kill), the next ones are answered 200.
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (hold) {
            hold = false;
            arrived();
            return; // no answer: the sender dies waiting
          }
          received.push({ headers: req.headers, body, status: 200 });
          res.writeHead(200).end('ok');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;

      const a = sender(location, ['setup', url]);
      const secret = await a.line('secret');
      await first; // the delivery is in flight
      a.proc.kill('SIGKILL');
      await a.exited;

      const b = sender(location, ['resume', url]);
      const delivered = await b.line('delivered');
      expect(await b.exited).toBe(0);
      server.closeAllConnections();
      server.close();
      expect(delivered).toMatchObject({ status: 'delivered', message_id: 'msg_kill9' });
      expect(received).toHaveLength(1);
      const payload = new Webhook(secret).verify(received[0]!.body, received[0]!.headers as Record<string, string>) as any;
      expect(payload.data).toEqual({ survived: true });
    },
    120_000,
  );
});
