/**
 * kill -9 durability: a real server child process acknowledges writes, is
 * killed with SIGKILL while more writes are in flight, restarts on the same
 * DATA_DIR, and must still hold every acknowledged write, with valid chains.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/env.ts';
import { exited, startServerProcess as startServer, type ServerProcess as Child } from '../helpers/server-process.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { sha256Hex } from '../../lib/hash.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** Every acknowledged write is asserted exactly: a burst of them on a slowed host must not meet the 5 s state deadline. */
const LONG_DEADLINE = { STATE_DEADLINE_MS: '30000' };

describe('durability across kill -9', () => {
  let dir: string;
  let child: Child | null = null;
  let dots: number[] = [];
  beforeAll(async () => {
    dir = await tempDir('proofline-kill9-');
    await ingestSmallFmcsa(path.join(dir, 'src'), dir);
    const r = await SnapshotReader.open(dir, 'fmcsa', { poolSize: 1 });
    dots = (await r.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 20')).map((x) => Number(x.dot_number));
    await r.close();
  }, 120_000);
  afterAll(async () => {
    child?.proc.kill('SIGKILL');
    await removeDir(dir);
  });

  it('keeps every acknowledged vetting record, custody event and credit balance', async () => {
    child = await startServer(dir, LONG_DEADLINE);
    const base = child.url;
    const grant = await fetch(
      `${base}/admin/credits`,
      post({ op: 'grant', account: 'acme-enterprise', n: 500, plan: 'pack_500' }, { authorization: 'Bearer test-admin-token' }),
    );
    expect(grant.status).toBe(200);
    const docs: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(
        `${base}/api/care`,
        post({
          shipment: { ref: `BOL-${i}`, commodity: 'steel coils', value_usd: 50000 + i },
          parties: { broker: 'acme', carrier: 'carrier-x' },
        }),
      );
      expect(r.status).toBe(201);
      const id = ((await r.json()) as { document_id: string }).document_id;
      docs.push(id);
      for (const stage of ['TENDER', 'PICKUP_HANDOFF'])
        expect((await fetch(`${base}/api/care/${id}/event`, post({ stage, actor: 'ops' }))).status).toBe(201);
    }
    // Acknowledged writes: remember every vetting record and event hash we were answered with.
    const vetted = new Map<string, string>();
    await Promise.all(
      dots.map(async (dot, i) => {
        const r = await fetch(`${base}/api/vet`, post({ dot_number: dot, broker_id: `kill9-${i % 2}` }));
        expect(r.status).toBe(200);
        const v = (await r.json()) as { vetting_id: string; data_hash: string };
        vetted.set(v.vetting_id, v.data_hash);
      }),
    );
    const acked = new Map<string, string>();
    await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const id = docs[i % docs.length]!;
        const r = await fetch(`${base}/api/care/${id}/event`, post({ stage: 'IN_TRANSIT', actor: 'gps', evidence: { ping: i } }));
        expect(r.status).toBe(201);
        const ev = (await r.json()) as { seq: number; hash: string };
        acked.set(`${id}#${ev.seq}`, ev.hash);
      }),
    );
    // More writes in flight, then SIGKILL without any shutdown.
    const inflightVets = dots.map((dot) =>
      fetch(`${base}/api/vet`, post({ dot_number: dot, broker_id: 'kill9-late' }))
        .then(async (r) => {
          if (r.status === 200) {
            const v = (await r.json()) as { vetting_id: string; data_hash: string };
            vetted.set(v.vetting_id, v.data_hash);
          }
        })
        .catch(() => undefined),
    );
    const inflight = Array.from({ length: 80 }, (_, i) =>
      fetch(`${base}/api/care/${docs[i % docs.length]}/event`, post({ stage: 'IN_TRANSIT', actor: 'gps', evidence: { late: i } }))
        .then(async (r) => {
          if (r.status === 201) {
            const ev = (await r.json()) as { seq: number; hash: string };
            acked.set(`${docs[i % docs.length]}#${ev.seq}`, ev.hash);
          }
        })
        .catch(() => undefined),
    );
    await new Promise((r) => setTimeout(r, 15));
    child.proc.kill('SIGKILL');
    await Promise.all([...inflight, ...inflightVets]);
    await exited(child.proc);

    child = await startServer(dir, LONG_DEADLINE);
    for (const id of docs) {
      const v = (await (await fetch(`${child.url}/api/care/${id}/verify`)).json()) as { valid: boolean; problems: unknown[] };
      expect(v).toMatchObject({ valid: true, problems: [] });
      const full = (await (await fetch(`${child.url}/api/care/${id}.json`)).json()) as { events: Array<{ seq: number; hash: string }> };
      const stored = new Map(full.events.map((e) => [`${id}#${e.seq}`, e.hash]));
      for (const [k, h] of acked) if (k.startsWith(`${id}#`)) expect(stored.get(k)).toBe(h);
    }
    for (const [id, hash] of vetted) {
      const v = (await (await fetch(`${child.url}/api/vetting?id=${id}`)).json()) as { data_hash: string; snapshot_json: string };
      expect(v.data_hash).toBe(hash);
      expect(sha256Hex(v.snapshot_json)).toBe(hash);
    }
    // Each free account's balance is its 30 signup credits minus exactly the records that survived: debit and record commit together.
    const byBroker = new Map<string, number>();
    for (const dot of dots) {
      const h = (await (await fetch(`${child.url}/api/vetting?dot=${dot}&limit=500`)).json()) as {
        records: Array<{ broker_id: string; vetting_id: string }>;
      };
      for (const r of h.records) byBroker.set(r.broker_id, (byBroker.get(r.broker_id) ?? 0) + 1);
    }
    for (const [broker, n] of byBroker) {
      const acct = (await (
        await fetch(
          `${child.url}/admin/credits`,
          post({ op: 'show', account: `broker:${broker}` }, { authorization: 'Bearer test-admin-token' }),
        )
      ).json()) as { account: { balance: number } };
      expect(acct.account.balance).toBe(30 - n);
    }
    expect(byBroker.get('kill9-0')).toBe(10);
    const show = await fetch(
      `${child.url}/admin/credits`,
      post({ op: 'show', account: 'acme-enterprise' }, { authorization: 'Bearer test-admin-token' }),
    );
    expect(((await show.json()) as { account: { balance: number; plan: string } }).account).toMatchObject({
      balance: 500,
      plan: 'pack_500',
    });
    child.proc.kill('SIGTERM');
    await exited(child.proc);
    child = null;
  }, 180_000);
});
