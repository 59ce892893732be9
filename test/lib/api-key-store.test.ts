/**
 * The server's view of the API key file (lib/api-keys.ts ApiKeyStore) when a change leaves the file's change times as
 * they were: Linux stamps them from a coarse tick, so a key revoked in the tick that created it leaves the same mtime
 * and ctime. The file's stamps are pinned here to force that case; the store must still refuse the revoked key.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiKeyStore, apiKeysPath, createApiKey, revokeApiKey } from '../../lib/api-keys.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

/** Every stat of the key file answers these stamps (the pinned tick), whatever was written; 0: not pinned. */
const pinned = vi.hoisted(() => {
  const state = {
    at: 0,
    pin: <T extends { mtimeMs: number; ctimeMs: number }>(st: T, p: unknown): T =>
      state.at && String(p).endsWith('api-keys.json') ? Object.assign(st, { mtimeMs: state.at, ctimeMs: state.at }) : st,
  };
  return state;
});
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    statSync: ((p: string, o?: object) => pinned.pin(fs.statSync(p, o) as import('node:fs').Stats, p)) as typeof fs.statSync,
  };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  return { ...fsp, stat: (async (p: string) => pinned.pin(await fsp.stat(p), p)) as typeof fsp.stat };
});

let dir: string;
beforeAll(async () => {
  dir = await tempDir('proofline-api-key-store-');
});
afterAll(async () => {
  if (dir) await removeDir(dir);
});

describe('ApiKeyStore', () => {
  it('refuses a key revoked in the same clock tick as its creation, once the watch has seen the file replaced', async () => {
    const { secret, record } = await createApiKey(dir, { label: 'same-tick' });
    pinned.at = Date.now();
    const store = new ApiKeyStore(dir, 60_000);
    try {
      await store.load();
      expect(store.lookup(secret)?.key_id).toBe(record.key_id);
      expect(await revokeApiKey(dir, record.key_id)).toBe(true);
      // The watch marks the set stale (asynchronously); the next lookup then reads the file again.
      const deadline = Date.now() + 5_000;
      while (store.lookup(secret) !== null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(store.lookup(secret)).toBeNull();
    } finally {
      store.close();
      pinned.at = 0;
    }
  });

  it('accepts a key created in the same clock tick as the file it was first refused from', async () => {
    pinned.at = Date.now();
    const store = new ApiKeyStore(dir, 60_000);
    try {
      await store.load();
      const { secret, record } = await createApiKey(dir, { label: 'same-tick-new' });
      // An unknown key looks at the file once more before its 401: the stamps say nothing changed.
      expect(store.lookup(secret)?.key_id).toBe(record.key_id);
    } finally {
      store.close();
      pinned.at = 0;
    }
  });

  it('keeps the previous keys when the file cannot be read, and reads it at the next check even with the same stamps', async () => {
    const { secret, record } = await createApiKey(dir, { label: 'unreadable' });
    const file = apiKeysPath(dir);
    const active = readFileSync(file, 'utf8');
    await revokeApiKey(dir, record.key_id);
    const revoked = readFileSync(file, 'utf8');
    writeFileSync(file, active);
    pinned.at = Date.now() - 60_000;
    const store = new ApiKeyStore(dir, 60_000);
    try {
      await store.load();
      expect(store.lookup(secret)?.key_id).toBe(record.key_id);
      // A new stamp, and a file that does not parse: an unknown key's check reads it and keeps the previous set.
      pinned.at += 1_000;
      writeFileSync(file, '{"keys": [');
      expect(store.lookup('pl_unknown')).toBeNull();
      expect(store.lookup(secret)?.key_id).toBe(record.key_id);
      // The file repaired under the same stamp: the failed read did not count as seen.
      writeFileSync(file, revoked);
      expect(store.lookup('pl_unknown')).toBeNull();
      expect(store.lookup(secret)).toBeNull();
    } finally {
      store.close();
      pinned.at = 0;
    }
  });
});
