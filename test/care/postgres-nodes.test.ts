/**
 * Every node writes (issue 20): real API server processes on one PostgreSQL
 * database (DATABASE_URL; a fresh database per run), sharing one DATA_DIR
 * for the warehouse snapshot and signing key. Skipped with a notice without
 * PostgreSQL, never under REQUIRE_POSTGRES=1 (helpers/postgres.ts).
 *
 * - two nodes append 50 custody events each to one document in parallel: one
 *   linear chain, every seq once, valid;
 * - vet + credit atomicity under concurrency: an account with N credits gets
 *   exactly N records, whichever node serves each request;
 * - receipts chain across nodes (prev_nonce resolved by the other node) and
 *   the offline verifier accepts the whole chain;
 * - kill -9 of a node during a write storm loses nothing it acknowledged;
 * - PostgreSQL stopped mid-storm (a server of the test's own) gives 503 with
 *   Retry-After (never a 500), /api/health says degraded, and writes resume
 *   when it is started again.
 */
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/hash.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { verifyReceiptChain, type PublicJwk, type Receipt } from '../../service/receipts/receipt-chain.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { freshDatabase, HAS_POSTGRES, startOwnCluster } from '../helpers/postgres.ts';
import { exited, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

async function json<T = Record<string, unknown>>(r: Response): Promise<T> {
  return (await r.json()) as T;
}

const suite = HAS_POSTGRES ? describe : describe.skip;

suite('every API node writes to one PostgreSQL', () => {
  let dir: string;
  let db: { url: string; drop: () => Promise<void> };
  let sql: postgres.Sql;
  const children: ServerProcess[] = [];
  let dots: number[] = [];
  // The shared database's nodes get a long state deadline: their tests assert exact outcomes of bursts of concurrent
  // writes, which a slowed host must not turn into 503s. The outage test's nodes keep the default, whose 503 it asserts.
  const start = async (url = db.url) => {
    const c = await startServerProcess(dir, {
      DATABASE_URL: url,
      RATE_LIMIT_FREE_PER_HOUR: '1000000',
      ...(url === db.url ? { STATE_DEADLINE_MS: '30000' } : {}),
    });
    children.push(c);
    return c;
  };

  beforeAll(async () => {
    dir = await tempDir('proofline-pg-nodes-');
    await ingestSmallFmcsa(path.join(dir, 'src'), dir);
    const r = await SnapshotReader.open(dir, 'fmcsa', { poolSize: 1 });
    dots = (await r.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 20')).map((x) => Number(x.dot_number));
    await r.close();
    db = await freshDatabase();
    sql = postgres(db.url, { max: 2, onnotice: () => undefined });
  }, 180_000);
  afterAll(async () => {
    for (const c of children) c.proc.kill('SIGKILL');
    await Promise.all(children.map((c) => exited(c.proc)));
    await sql?.end();
    await db?.drop();
    await removeDir(dir);
  });

  it('appends 50 events from each of two nodes to one document as one linear chain that verifies', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const doc = await json<{ document_id: string }>(
      await fetch(
        `${a.url}/api/care`,
        post({ shipment: { ref: 'BOL-PG', commodity: 'steel', value_usd: 1 }, parties: { broker: 'x', carrier: 'y' } }),
      ),
    );
    const id = doc.document_id;
    for (const stage of ['TENDER', 'PICKUP_HANDOFF'])
      expect((await fetch(`${b.url}/api/care/${id}/event`, post({ stage, actor: 'ops' }))).status).toBe(201);
    const appends = [a, b].flatMap((node, n) =>
      Array.from({ length: 50 }, async (_, i) => {
        const r = await fetch(`${node.url}/api/care/${id}/event`, post({ stage: 'IN_TRANSIT', actor: `node-${n}`, evidence: { ping: i } }));
        expect(r.status).toBe(201);
        return json<{ seq: number; prev_hash: string; hash: string }>(r);
      }),
    );
    const events = await Promise.all(appends);
    expect(events.map((e) => e.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i + 3));
    expect(new Set(events.map((e) => e.prev_hash)).size).toBe(100); // no two events on one head: no fork
    for (const node of [a, b]) {
      const v = await json(await fetch(`${node.url}/api/care/${id}/verify`));
      expect(v).toMatchObject({ valid: true, events_verified: 102, problems: [] });
    }
  }, 120_000);

  it('makes exactly as many vetting records as an account has credits, across nodes', async () => {
    const [a, b] = children.slice(0, 2) as [ServerProcess, ServerProcess];
    // A free account has 30 signup credits; 40 vettings race on two nodes.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/api/vet`, post({ dot_number: dots[i % dots.length], broker_id: 'race-broker' })).then(async (r) => ({
          status: r.status,
          body: await json<{ vetting_id?: string }>(r),
        })),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBe(30);
    expect(results.filter((r) => r.status === 402).length).toBe(10);
    const [row] = await sql`SELECT count(*)::int AS n FROM vetting_records WHERE account_id = 'broker:race-broker'`;
    expect(row!.n).toBe(30);
    const [acct] = await sql`SELECT balance::int AS balance FROM accounts WHERE account_id = 'broker:race-broker'`;
    expect(acct!.balance).toBe(0);
    expect(new Set(ok.map((r) => r.body.vetting_id)).size).toBe(30);
  }, 120_000);

  it('accepts an API key issued on one node on every node (keys in the database, not the key file)', async () => {
    const [a, b] = children.slice(0, 2) as [ServerProcess, ServerProcess];
    const admin = { authorization: 'Bearer test-admin-token' };
    expect(
      (await fetch(`${a.url}/admin/credits`, post({ op: 'grant', account: 'acme-pro', n: 100, plan: 'pack_100' }, admin))).status,
    ).toBe(200);
    const issued = await json<{ api_key: string; key_id: string }>(
      await fetch(`${a.url}/admin/credits`, post({ op: 'key', account: 'acme-pro' }, admin)),
    );
    const [row] = await sql`SELECT count(*)::int AS n FROM api_keys WHERE key_id = ${issued.key_id}`;
    expect(row!.n).toBe(1);
    // Node b re-reads the keys every 2 s: the key works there once it has.
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      const r = await fetch(
        `${b.url}/api/vet`,
        post({ dot_number: dots[0], broker_id: 'pro-broker' }, { authorization: `Bearer ${issued.api_key}` }),
      );
      status = r.status;
      const body = await json<{ credits?: { account_id: string } }>(r);
      if (status === 200) expect(body.credits?.account_id).toBe('acme-pro');
      else await new Promise((res) => setTimeout(res, 500));
    }
    expect(status).toBe(200);
  }, 180_000);

  it('answers a POST retried on another node with the same Idempotency-Key with the first answer', async () => {
    const [a, b] = children.slice(0, 2) as [ServerProcess, ServerProcess];
    const body = { dot_number: dots[1], broker_id: 'idem-broker' };
    const first = await fetch(`${a.url}/api/vet`, post(body, { 'idempotency-key': 'vet-retry-1' }));
    expect(first.status).toBe(200);
    const again = await fetch(`${b.url}/api/vet`, post(body, { 'idempotency-key': 'vet-retry-1' }));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const [v1, v2] = [await json<{ vetting_id: string }>(first), await json<{ vetting_id: string }>(again)];
    expect(v2.vetting_id).toBe(v1.vetting_id);
    const [row] = await sql`SELECT count(*)::int AS n FROM vetting_records WHERE account_id = 'broker:idem-broker'`;
    expect(row!.n).toBe(1);
  }, 180_000);

  it('chains receipts whichever node answers, and the offline verifier accepts the chain', async () => {
    const [a, b] = children.slice(0, 2) as [ServerProcess, ServerProcess];
    const receipts: Receipt[] = [];
    let prev: string | null = null;
    for (let i = 0; i < 6; i++) {
      const node = i % 2 ? b : a;
      const leaf = sha256Hex(`no such leaf ${i}`);
      const r = await fetch(`${node.url}/api/verify/${leaf}${prev ? `?prev_nonce=${prev}` : ''}`);
      expect(r.status).toBe(404); // an unknown leaf still gets a signed found:false receipt
      const receipt = (await json<{ receipt: Receipt }>(r)).receipt;
      expect(receipt.prev_nonce).toBe(prev);
      receipts.push(receipt);
      prev = receipt.nonce;
    }
    const keys = await json<{ keys: PublicJwk[] }>(await fetch(`${a.url}/.well-known/proofline-keys.json`));
    expect(verifyReceiptChain(receipts, keys.keys).valid).toBe(true);
  }, 180_000);

  it("counts every node's requests in /api/stats on each node (the query log is one PostgreSQL table)", async () => {
    const [a, b] = children.slice(0, 2) as [ServerProcess, ServerProcess];
    const ua = { 'user-agent': 'PerplexityBot/1.0' }; // the only perplexitybot requests of this suite
    for (const [node, n] of [
      [a, 5],
      [b, 3],
    ] as const)
      for (let i = 0; i < n; i++) expect((await fetch(`${node.url}/api/carrier/${dots[i]}`, { headers: ua })).status).toBe(200);
    // Each node writes its rows within a flush interval (1 s): poll until the other node's rows are in.
    for (const node of [a, b])
      await expect
        .poll(
          async () =>
            (await json<{ ai_queries_24h: { by_agent_type: Record<string, number> } }>(await fetch(`${node.url}/api/stats`))).ai_queries_24h
              .by_agent_type.perplexitybot,
          { timeout: 15_000, interval: 250 },
        )
        .toBe(8);
    const [row] = await sql`SELECT count(*)::int AS n FROM query_log WHERE agent_type = 'perplexitybot'`;
    expect(row!.n).toBe(8);
  }, 180_000);

  it('keeps one watchlist and one set of webhook endpoints whichever node (HTTP or MCP) answers', async () => {
    const [a, b] = children.slice(0, 2) as [ServerProcess, ServerProcess];
    const added = await fetch(`${a.url}/api/watchlist`, post({ broker_id: 'pg-watch', dot_numbers: [dots[0], dots[1]] }));
    expect(added.status).toBe(200);
    const listed = await json<{ carriers: Array<{ dot_number: number }> }>(await fetch(`${b.url}/api/watchlist?broker_id=pg-watch`));
    expect(listed.carriers.map((c) => c.dot_number)).toEqual([dots[0], dots[1]]);
    // MCP on the other node: the same tool functions over the same rows.
    const rpc = await fetch(`${b.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'freight_watchlist_add', arguments: { broker_id: 'pg-watch', dot_numbers: [dots[2]] } },
      }),
    });
    expect(rpc.status).toBe(200);
    expect(await rpc.text()).toMatch(/"watched\\?":3/);
    // 17 more carriers added one request each, alternating nodes and in parallel: every one counted once.
    const race = await Promise.all(
      dots
        .slice(3, 20)
        .flatMap((d, i) => [
          fetch(`${(i % 2 ? a : b).url}/api/watchlist`, post({ broker_id: 'pg-watch', dot_numbers: [d] })).then((r) => r.status),
        ]),
    );
    expect(race.every((st) => st === 200)).toBe(true);
    const [w] = await sql`SELECT count(*)::int AS n FROM watchlist WHERE account_id = 'broker:pg-watch'`;
    expect(w!.n).toBe(20);
    const ep = await fetch(
      `${a.url}/api/webhooks`,
      post({ broker_id: 'pg-watch', url: 'https://93.184.216.34/hook', event_types: ['carrier.changed'] }),
    );
    expect(ep.status, await ep.clone().text()).toBe(200);
    const eps = await json<{ endpoints: Array<{ url: string }> }>(await fetch(`${b.url}/api/webhooks?broker_id=pg-watch`));
    expect(eps.endpoints.map((e) => e.url)).toEqual(['https://93.184.216.34/hook']);
  }, 180_000);

  it('keeps every acknowledged write when a node is killed with SIGKILL during a storm', async () => {
    const [a, b] = children.slice(0, 2) as [ServerProcess, ServerProcess];
    const id = (
      await json<{ document_id: string }>(
        await fetch(
          `${b.url}/api/care`,
          post({ shipment: { ref: 'BOL-K9', commodity: 'ice', value_usd: 2 }, parties: { broker: 'x', carrier: 'y' } }),
        ),
      )
    ).document_id;
    for (const stage of ['TENDER', 'PICKUP_HANDOFF'])
      expect((await fetch(`${b.url}/api/care/${id}/event`, post({ stage, actor: 'ops' }))).status).toBe(201);
    const acked = new Map<number, string>();
    const vetted = new Map<string, string>();
    const storm = Array.from({ length: 120 }, async (_, i) => {
      const node = i % 2 ? a : b;
      try {
        if (i % 4 === 0) {
          const r = await fetch(`${node.url}/api/vet`, post({ dot_number: dots[i % dots.length], broker_id: `storm-${i % 3}` }));
          if (r.status === 200) {
            const v = await json<{ vetting_id: string; data_hash: string }>(r);
            vetted.set(v.vetting_id, v.data_hash);
          }
        } else {
          const r = await fetch(`${node.url}/api/care/${id}/event`, post({ stage: 'IN_TRANSIT', actor: 'gps', evidence: { i } }));
          if (r.status === 201) {
            const e = await json<{ seq: number; hash: string }>(r);
            acked.set(e.seq, e.hash);
          }
          expect(r.status).not.toBe(500);
        }
      } catch {
        // the killed node's connections reset: not acknowledged
      }
    });
    await new Promise((r) => setTimeout(r, 40));
    a.proc.kill('SIGKILL');
    await Promise.all(storm);
    await exited(a.proc);
    expect(acked.size).toBeGreaterThan(0);
    const restarted = await start();
    for (const node of [restarted, b]) {
      const full = await json<{ events: Array<{ seq: number; hash: string }>; verification: { valid: boolean } }>(
        await fetch(`${node.url}/api/care/${id}.json`),
      );
      expect(full.verification.valid).toBe(true);
      const stored = new Map(full.events.map((e) => [e.seq, e.hash]));
      for (const [seq, hash] of acked) expect(stored.get(seq)).toBe(hash);
    }
    for (const [vid, hash] of vetted) {
      const v = await json<{ data_hash: string; snapshot_json: string }>(await fetch(`${restarted.url}/api/vetting?id=${vid}`));
      expect(v.data_hash).toBe(hash);
      expect(sha256Hex(v.snapshot_json)).toBe(hash);
    }
    // Debit and record commit together, even for requests cut off by the kill: each free account's balance is its 30
    // signup credits minus exactly the records it has.
    for (const broker of ['storm-0', 'storm-1', 'storm-2']) {
      const [rec] = await sql`SELECT count(*)::int AS n FROM vetting_records WHERE account_id = ${`broker:${broker}`}`;
      const [acct] = await sql`SELECT balance::int AS balance FROM accounts WHERE account_id = ${`broker:${broker}`}`;
      if (acct) expect(acct.balance).toBe(30 - rec!.n);
      else expect(rec!.n).toBe(0);
    }
  }, 120_000);

  it('answers 503 with Retry-After while PostgreSQL is stopped mid-storm, reports degraded, and resumes when it is started', async () => {
    // A server of this test's own, stopped (pg_ctl stop -m fast) and started again while two nodes write.
    const cluster = await startOwnCluster();
    try {
      const [a, b] = await Promise.all([start(cluster.url), start(cluster.url)]);
      const alive = () => [a, b].map((n) => (n.proc.exitCode === null ? 'up' : `exited: ${n.stderr().slice(-500)}`));
      const id = (
        await json<{ document_id: string }>(
          await fetch(
            `${a.url}/api/care`,
            post({ shipment: { ref: 'BOL-DOWN', commodity: 'ore', value_usd: 3 }, parties: { broker: 'x', carrier: 'y' } }),
          ),
        )
      ).document_id;
      for (const stage of ['TENDER', 'PICKUP_HANDOFF'])
        expect((await fetch(`${a.url}/api/care/${id}/event`, post({ stage, actor: 'ops' }))).status).toBe(201);
      const statuses: number[] = [];
      const acked = new Map<number, string>();
      const append = async (node: ServerProcess, i: number) => {
        const r = await fetch(`${node.url}/api/care/${id}/event`, post({ stage: 'IN_TRANSIT', actor: 'gps', evidence: { i } })).catch(
          (e: Error) => {
            // A node that drops a connection instead of answering 503 has most likely died: say how.
            throw new Error(`POST event ${i} failed (${e.message}); nodes: ${JSON.stringify(alive())}`);
          },
        );
        statuses.push(r.status);
        if (r.status === 201) {
          const e = await json<{ seq: number; hash: string }>(r);
          acked.set(e.seq, e.hash);
        } else {
          expect(r.status).toBe(503);
          expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
        }
      };
      const before = Array.from({ length: 40 }, (_, i) => append(i % 2 ? a : b, i));
      await new Promise((r) => setTimeout(r, 20));
      await cluster.stop();
      await Promise.all(before);
      expect(alive()).toEqual(['up', 'up']);
      const during = await Promise.all(Array.from({ length: 10 }, (_, i) => append(i % 2 ? a : b, 100 + i)));
      expect(during.length).toBe(10);
      expect(statuses.slice(-10).every((s) => s === 503)).toBe(true);
      const health = await json<{ status: string; dependencies: Record<string, string>; state_backend: string }>(
        await fetch(`${a.url}/api/health`),
      );
      expect(health).toMatchObject({ status: 'degraded', state_backend: 'postgres' });
      expect(['down', 'slow']).toContain(health.dependencies.postgres);
      await cluster.start();
      // Writes resume once the database is reachable again (the driver reconnects on the next statement).
      let resumed = 0;
      for (let i = 0; i < 20 && resumed < 4; i++) {
        const r = await fetch(
          `${(i % 2 ? a : b).url}/api/care/${id}/event`,
          post({ stage: 'IN_TRANSIT', actor: 'gps', evidence: { after: i } }),
        );
        expect([201, 503]).toContain(r.status);
        if (r.status === 201) {
          resumed++;
          const e = await json<{ seq: number; hash: string }>(r);
          acked.set(e.seq, e.hash);
        } else await new Promise((res) => setTimeout(res, 250));
      }
      expect(resumed).toBe(4);
      expect(statuses).not.toContain(500);
      const healthAfter = await json<{ status: string; dependencies: Record<string, string> }>(await fetch(`${b.url}/api/health`));
      expect(healthAfter.dependencies.postgres).toBe('up');
      // A node whose state breaker opened during the outage (state.deadline.ts) answers 503 until its next trial call
      // succeeds (openMs later): reads resume too, they are never a 500.
      let full: { events: Array<{ seq: number; hash: string }>; verification: { valid: boolean } } | undefined;
      for (let i = 0; i < 60 && !full; i++) {
        const r = await fetch(`${b.url}/api/care/${id}.json`);
        expect([200, 503]).toContain(r.status);
        if (r.status === 200) full = await json(r);
        else await new Promise((res) => setTimeout(res, 250));
      }
      if (!full) throw new Error('node b never answered the chain after PostgreSQL came back');
      expect(full.verification.valid).toBe(true);
      const stored = new Map(full.events.map((e) => [e.seq, e.hash]));
      for (const [seq, hash] of acked) expect(stored.get(seq)).toBe(hash);
    } finally {
      await cluster.destroy();
    }
  }, 120_000);
});
