/**
 * The state-store suite, run on both backends (issue 20): the embedded DuckDB
 * file and PostgreSQL (DATABASE_URL; skipped with a notice without it, never
 * under REQUIRE_POSTGRES=1). Each backend gets a fresh store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { insertRowsSql, type StateStore, updateRowsSql } from '../../service/platform/state.store.ts';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';

const INSERT_META = insertRowsSql('state_meta', { key: 'VARCHAR', value: 'VARCHAR' });
const UPDATE_META = updateRowsSql('state_meta', 'key', { key: 'VARCHAR', value: 'VARCHAR' });

const itRun = it;
const itSkip = it.skip;

describe.each(STATE_BACKENDS)('StateStore group commit ($name)', ({ skip, open }) => {
  let store: StateStore;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    if (skip) return;
    ({ store, dispose } = await open());
  });
  afterAll(async () => {
    if (!skip) await dispose();
  });
  const it = skip ? itSkip : itRun;

  it('commits concurrent writes in shared groups and resolves each after commit', async () => {
    const before = store.stats.commits;
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.write(async (tx) => tx.defer(INSERT_META, { key: `k${i}`, value: String(i) }))),
    );
    expect(store.stats.commits - before).toBeLessThan(50);
    expect((await store.query("SELECT count(*)::INTEGER AS n FROM state_meta WHERE key LIKE 'k%'"))[0]!.n).toBe(50);
  });

  it('commits a write queued by the caller of the group just committed, before that drain has finished', async () => {
    // The caller resumes while the drain that resolved it is still unwinding; its next write must start a new drain.
    const chained = (async () => {
      await store.write(async (tx) => tx.defer(INSERT_META, { key: 'chain1', value: '1' }));
      await Promise.all([Promise.resolve()]);
      return store.write(async (tx) => tx.defer(INSERT_META, { key: 'chain2', value: '2' }));
    })();
    const timedOut = Symbol('timed out');
    const outcome = await Promise.race([chained.then(() => 'committed'), new Promise((r) => setTimeout(() => r(timedOut), 3000))]);
    expect(outcome).toBe('committed');
    expect((await store.query("SELECT count(*)::INTEGER AS n FROM state_meta WHERE key IN ('chain1', 'chain2')"))[0]!.n).toBe(2);
  });

  it('answers a hinted readLocked as an unhinted one: fresh after an immediate write, and a failed hinted read fails its group', async () => {
    await store.write(async (tx) => tx.defer(INSERT_META, { key: 'h1', value: 'before' }));
    const read = ['SELECT value FROM state_meta WHERE key = $1', ['h1']] as const;
    const hint = { lock: 'meta:h1', reads: [read] };
    const seen = await Promise.all([
      store.write(async (tx) => (await tx.readLocked('meta:h1', [read]))[0]![0]!.value, hint),
      // An immediate write in the group before the next hinted operation reads: it must see the new value.
      store.write(async (tx) => tx.write("UPDATE state_meta SET value = 'after' WHERE key = $1", ['h1'])),
      store.write(async (tx) => (await tx.readLocked('meta:h1', [read]))[0]![0]!.value, hint),
      // A hint the operation does not ask for is not used: it reads what it asks.
      store.write(
        async (tx) =>
          (await tx.readLocked('meta:h1', [['SELECT count(*)::INTEGER AS n FROM state_meta WHERE key = $1', ['h1']]]))[0]![0]!.n,
        hint,
      ),
    ]);
    expect(seen).toEqual(['before', undefined, 'after', 1]);
    // A hinted read that fails (unknown table) aborts the group: nothing of it is reported committed.
    const bad = { lock: 'meta:bad', reads: [['SELECT * FROM no_such_table'] as const] };
    const results = await Promise.allSettled([
      store.write(async (tx) => tx.defer(INSERT_META, { key: 'h2', value: 'x' }), bad),
      store.write(async (tx) => tx.defer(INSERT_META, { key: 'h3', value: 'y' })),
    ]);
    const committed = (await store.query("SELECT key FROM state_meta WHERE key IN ('h2', 'h3') ORDER BY key")).map((r) => r.key);
    // Embedded: hints are ignored, both commit. PostgreSQL: the group fails, then each is replayed alone: the hinted
    // one fails again, the other commits.
    expect(results.map((r) => r.status)).toEqual(store.backend === 'postgres' ? ['rejected', 'fulfilled'] : ['fulfilled', 'fulfilled']);
    expect(committed).toEqual(store.backend === 'postgres' ? ['h3'] : ['h2', 'h3']);
  });

  it('rejects only the operation that fails validation before writing', async () => {
    const results = await Promise.allSettled([
      store.write(async (tx) => tx.defer(INSERT_META, { key: 'v1', value: 'a' })),
      store.write(async () => {
        throw new InvalidInputError('nope');
      }),
      store.write(async (tx) => tx.defer(INSERT_META, { key: 'v2', value: 'b' })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.query("SELECT count(*)::INTEGER AS n FROM state_meta WHERE key IN ('v1', 'v2')"))[0]!.n).toBe(2);
  });

  it('replays a group whose flush fails so only the faulty operation is lost', async () => {
    const results = await Promise.allSettled([
      store.write(async (tx) => tx.defer(INSERT_META, { key: 'd1', value: 'a' })),
      store.write(async (tx) => tx.defer(INSERT_META, { key: 'k1', value: 'duplicate primary key' })),
      store.write(async (tx) => tx.defer(INSERT_META, { key: 'd2', value: 'b' })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(
      (await store.query("SELECT key, value FROM state_meta WHERE key IN ('d1', 'd2', 'k1') ORDER BY key")).map(
        (r) => `${r.key}=${r.value}`,
      ),
    ).toEqual(['d1=a', 'd2=b', 'k1=1']);
  });

  it('reads positional parameters and applies batched updates last-write-wins', async () => {
    await store.write(async (tx) => {
      tx.defer(INSERT_META, { key: 'u1', value: 'first' });
      tx.defer(UPDATE_META, { key: 'u1', value: 'second' }, 'u1');
      tx.defer(UPDATE_META, { key: 'u1', value: 'third' }, 'u1');
    });
    expect((await store.query('SELECT value FROM state_meta WHERE key = $1', ['u1']))[0]!.value).toBe('third');
  });

  it('serialises read-then-write operations that lock the same key (no lost update)', async () => {
    await store.write(async (tx) => tx.defer(INSERT_META, { key: 'counter', value: '0' }));
    // Each increment locks, reads the committed (or this group's cached) value and writes value + 1.
    const increment = () =>
      store.write(async (tx) => {
        await tx.lock('meta:counter');
        const cached = tx.cache.get('meta:counter') as number | undefined;
        const n = cached ?? Number((await tx.read('SELECT value FROM state_meta WHERE key = $1', ['counter']))[0]!.value);
        tx.defer(UPDATE_META, { key: 'counter', value: String(n + 1) }, 'counter');
        tx.cache.set('meta:counter', n + 1);
      });
    await Promise.all(Array.from({ length: 40 }, increment));
    expect((await store.query('SELECT value FROM state_meta WHERE key = $1', ['counter']))[0]!.value).toBe('40');
  });

  it('reports its backend as up', async () => {
    expect(await store.health()).toMatchObject({ backend: store.backend, up: true });
  });
});
