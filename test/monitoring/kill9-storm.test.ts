/**
 * kill -9 of an API server process during a monitoring write storm, on both
 * state backends (issue 20, Faults): watchlist adds and webhook endpoint
 * registrations race on a real server (`service/main.ts`), which is killed
 * with SIGKILL once some have been acknowledged and while others are in
 * flight. After a restart every write answered 2xx is there, once: each
 * acknowledged carrier is on its watchlist, each acknowledged endpoint is
 * listed with its URL, and no account holds an endpoint twice.
 *
 * Embedded DuckDB: the restarted process reopens the state file of the same
 * DATA_DIR. PostgreSQL: a fresh database on DATABASE_URL's server (skipped with
 * a notice without one, never under REQUIRE_POSTGRES=1). The webhook sender
 * killed mid-delivery is test/monitoring/kill9.test.ts.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { freshDatabase, HAS_POSTGRES } from '../helpers/postgres.ts';
import { exited, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const BROKERS = ['storm-a', 'storm-b', 'storm-c', 'storm-d'];

let root: string;
let dots: number[] = [];
const cleanups: Array<() => Promise<void>> = [];
beforeAll(async () => {
  root = await tempDir('proofline-monitoring-storm-');
  // One warehouse (and DATA_DIR) for both backends, ingested once.
  await ingestSmallFmcsa(path.join(root, 'src'), path.join(root, 'data'));
  const r = await SnapshotReader.open(path.join(root, 'data'), 'fmcsa', { poolSize: 1 });
  dots = (await r.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 20')).map((x) => Number(x.dot_number));
  await r.close();
}, 180_000);
afterAll(async () => {
  for (const c of cleanups) await c();
  await removeDir(root);
});

const BACKENDS = [
  { name: 'embedded DuckDB', skip: false, env: async (): Promise<Record<string, string>> => ({}) },
  {
    name: 'PostgreSQL',
    skip: !HAS_POSTGRES,
    env: async (): Promise<Record<string, string>> => {
      const db = await freshDatabase();
      cleanups.push(db.drop);
      return { DATABASE_URL: db.url };
    },
  },
];

describe.each(BACKENDS)('a monitoring write storm across kill -9 ($name state store)', (backend) => {
  let node: ServerProcess | null = null;
  afterAll(async () => {
    if (node) {
      node.proc.kill('SIGKILL');
      await exited(node.proc);
    }
  });

  it.skipIf(backend.skip)(
    'keeps every acknowledged watchlist add and webhook registration',
    async () => {
      const env: Record<string, string> = { ...(await backend.env()), RATE_LIMIT_FREE_PER_HOUR: '1000000' };
      const dataDir = path.join(root, 'data');
      // The embedded store lives in DATA_DIR/state: each run starts from none.
      if (!env.DATABASE_URL) await removeDir(path.join(dataDir, 'state'));
      node = await startServerProcess(dataDir, env);
      const base = node.url;
      const watched = new Set<string>(); // `${broker}#${dot}` answered 200
      const endpoints = new Map<string, { broker: string; url: string }>(); // endpoint_id answered 200
      const statuses: number[] = [];
      let acked = 0;
      let resolveEnough: () => void = () => undefined;
      const enough = new Promise<void>((r) => (resolveEnough = r));
      // 8 clients each send one request after another (so requests are in flight whenever the kill lands) from a queue
      // longer than the storm can get through before it; a client stops at its first connection error.
      const N = 2_000;
      const KILL_AFTER = 60;
      let next = 0;
      const one = async (i: number) => {
        const broker = BROKERS[Math.floor(i / 4) % BROKERS.length]!;
        if (i % 4 === 3) {
          const url = `https://93.184.216.34/hook/${i}`;
          const r = await fetch(`${base}/api/webhooks`, post({ broker_id: broker, url, event_types: ['carrier.changed'] }));
          statuses.push(r.status);
          if (r.status === 200) endpoints.set(((await r.json()) as { endpoint_id: string }).endpoint_id, { broker, url });
        } else {
          const dot = dots[i % dots.length]!;
          const r = await fetch(`${base}/api/watchlist`, post({ broker_id: broker, dot_numbers: [dot] }));
          statuses.push(r.status);
          if (r.status === 200) watched.add(`${broker}#${dot}`);
        }
        if (statuses.at(-1) === 200 && ++acked === KILL_AFTER) resolveEnough();
      };
      const clients = Array.from({ length: 8 }, async () => {
        while (next < N) {
          try {
            await one(next++);
          } catch {
            return; // the killed node's connections reset or are refused: not acknowledged
          }
        }
      });
      // Kill once enough is acknowledged (a condition, not a delay) while the clients' next requests are in flight.
      await Promise.race([enough, Promise.all(clients)]);
      node.proc.kill('SIGKILL');
      await Promise.all(clients);
      await exited(node.proc);
      expect(acked).toBeGreaterThanOrEqual(KILL_AFTER);
      expect(next).toBeLessThan(N); // the kill landed mid-storm
      // Never a 500; a 503 (a state call past its deadline on a loaded machine) is an answer that acknowledges nothing.
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);

      node = await startServerProcess(dataDir, env);
      for (const broker of BROKERS) {
        const list = (await (await fetch(`${node.url}/api/watchlist?broker_id=${broker}&limit=1000`)).json()) as {
          carriers: Array<{ dot_number: number }>;
        };
        const have = list.carriers.map((c) => c.dot_number);
        expect(new Set(have).size).toBe(have.length);
        for (const key of watched) if (key.startsWith(`${broker}#`)) expect(have).toContain(Number(key.split('#')[1]));
        const eps = (await (await fetch(`${node.url}/api/webhooks?broker_id=${broker}`)).json()) as {
          endpoints: Array<{ endpoint_id: string; url: string }>;
        };
        const byId = new Map(eps.endpoints.map((e) => [e.endpoint_id, e.url]));
        expect(byId.size).toBe(eps.endpoints.length);
        for (const [id, e] of endpoints) if (e.broker === broker) expect(byId.get(id)).toBe(e.url);
        // Each URL registered once: a request killed mid-way left at most its own endpoint, never a second copy.
        expect(new Set(eps.endpoints.map((e) => e.url)).size).toBe(eps.endpoints.length);
      }
      node.proc.kill('SIGTERM');
      await exited(node.proc);
      node = null;
    },
    180_000, // two server starts under tsx on a loaded 2-core machine
  );
});
