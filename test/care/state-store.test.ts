import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import { insertRowsSql, StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const INSERT_META = insertRowsSql('state_meta', { key: 'VARCHAR', value: 'VARCHAR' });

describe('StateStore group commit', () => {
  let dir: string;
  let store: StateStore;
  beforeAll(async () => {
    dir = await tempDir('proofline-store-');
    store = await StateStore.open(stateDbPath(dir));
  });
  afterAll(async () => {
    await store.close();
    await removeDir(dir);
  });

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
});
