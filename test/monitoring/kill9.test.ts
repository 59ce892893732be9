import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import type { Received } from './receiver.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'proofline-kill9-'));
const script = path.join(import.meta.dirname, 'sender-process.ts');
const received: Received[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

function sender(args: string[]) {
  const proc = spawn(process.execPath, ['--import', 'tsx', script, path.join(dir, 'state.duckdb'), ...args], {
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

describe('a sender killed mid-delivery', () => {
  it('delivers the event after a restart (kill -9 while the receiver holds the request open)', async () => {
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

    const a = sender(['setup', url]);
    const secret = await a.line('secret');
    await first; // the delivery is in flight
    a.proc.kill('SIGKILL');
    await a.exited;

    const b = sender(['resume', url]);
    const delivered = await b.line('delivered');
    expect(await b.exited).toBe(0);
    server.closeAllConnections();
    server.close();
    expect(delivered).toMatchObject({ status: 'delivered', message_id: 'msg_kill9' });
    expect(received).toHaveLength(1);
    const payload = new Webhook(secret).verify(received[0]!.body, received[0]!.headers as Record<string, string>) as any;
    expect(payload.data).toEqual({ survived: true });
  }, 120_000);
});
