/**
 * API key changes take effect before the next request is answered (issue 25):
 * against a real server process, a key created by the admin library (what
 * `npm run apikeys` runs) is accepted on its first use right after, and a
 * revoked key is refused on its next use right after, five times each.
 * (Each use follows the change at once, well within the 100 ms.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../lib/api-keys.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { exited, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

describe('chaos: API key changes', () => {
  let dir: string;
  let server: ServerProcess;
  beforeAll(async () => {
    dir = await tempDir();
    server = await startServerProcess(dir);
  }, 180_000);
  afterAll(async () => {
    server.proc.kill('SIGTERM');
    await exited(server.proc);
    await removeDir(dir);
  });

  /** A metered request (an unknown /api path: 404 once the key is accepted, 401 when it is not). */
  const use = async (secret: string) =>
    (await fetch(`${server.url}/api/no-such-route`, { headers: { authorization: `Bearer ${secret}` } })).status;

  it('accepts a new key on its first use and refuses a revoked key on its next use', async () => {
    for (let i = 0; i < 5; i++) {
      const { secret, record } = await createApiKey(dir, { label: `k${i}` });
      expect(await use(secret)).toBe(404);
      expect(await use(secret)).toBe(404); // memoised identity
      await revokeApiKey(dir, record.key_id);
      expect(await use(secret)).toBe(401);
    }
  });
});
