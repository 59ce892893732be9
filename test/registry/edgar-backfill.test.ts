/**
 * Backfill from the SEC's bulk archives (jobs/registry/edgar-backfill.ts) against the replay server: the
 * archive is read as a stream and only the universe's entries are kept (with sidecars naming the archive); a
 * rerun asks conditionally and downloads nothing; an archive cut short is an error naming the URL and byte
 * position, what was written is whole, and the rerun completes it without writing those entries again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BULK_PATHS, backfillBulkArchive } from '../../jobs/registry/edgar-backfill.ts';
import { EdgarClient } from '../../jobs/registry/edgar-client.ts';
import { silentLogger } from '../../lib/log.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { FIXTURES, HAS_SHARED } from '../helpers/shared.ts';

const UA = 'Proofline Tests tests@proofline.example';

describe.skipIf(!HAS_SHARED)('backfill from the bulk archives (replay server)', { timeout: 120_000 }, () => {
  let replay: ReplayServer;
  const dirs: string[] = [];
  beforeAll(async () => {
    replay = await startReplayServer(FIXTURES);
  });
  afterEach(async () => {
    await closeSecLimiter();
  });
  afterAll(async () => {
    await replay.close();
    for (const d of dirs) await removeDir(d);
  });
  const setup = async () => {
    const dataDir = await tempDir('proofline-backfill-');
    dirs.push(dataDir);
    const config = testConfig(dataDir, {
      SEC_USER_AGENT: UA,
      SEC_WWW_BASE_URL: replay.baseUrl,
      SEC_DATA_BASE_URL: replay.baseUrl,
      SEC_RATE_LIMIT: '10',
    });
    return { inputDir: path.join(dataDir, 'input'), client: EdgarClient.fromConfig(config) };
  };

  it('keeps the universe entries of a streamed archive and does not download it again', async () => {
    const { inputDir, client } = await setup();
    const universe = new Set([320193, 1045810, 1318605]);
    const r = await backfillBulkArchive(client, 'submissions', { inputDir, universe, log: silentLogger });
    expect(r).toMatchObject({ unchanged: false, written: 4, kept: 0, entries_seen: 33 });
    const files = (await readdir(path.join(inputDir, 'sec', 'submissions'))).filter((f) => !f.endsWith('.meta.json')).sort();
    expect(files).toEqual(['CIK0000320193.json', 'CIK0001045810.json', 'CIK0001318605-submissions-001.json', 'CIK0001318605.json']);
    const meta = JSON.parse(await readFile(path.join(inputDir, 'sec', 'submissions', 'CIK0000320193.json.meta.json'), 'utf8'));
    expect(meta).toMatchObject({
      source_url: 'https://data.sec.gov/submissions/CIK0000320193.json',
      archive: `${replay.baseUrl}${BULK_PATHS.submissions}`,
      archive_entry: 'CIK0000320193.json',
    });
    const from = replay.hits.length;
    const again = await backfillBulkArchive(client, 'submissions', { inputDir, universe, log: silentLogger });
    expect(again.unchanged).toBe(true);
    expect(replay.hits.slice(from).map((h) => h.status)).toEqual([304]);
  });

  it('stops with the URL and position on an archive cut short, and the rerun completes it', async () => {
    const { inputDir, client } = await setup();
    replay.fault(BULK_PATHS.submissions, { times: 1, mode: 'truncate' });
    await expect(backfillBulkArchive(client, 'submissions', { inputDir, universe: null, log: silentLogger })).rejects.toThrow(
      /submissions\.zip: archive cut short at byte \d+/,
    );
    const dir = path.join(inputDir, 'sec', 'submissions');
    const first = (await readdir(dir)).filter((f) => f.endsWith('.json') && !f.endsWith('.meta.json'));
    expect(first.length).toBeGreaterThan(0);
    for (const f of first) expect(() => JSON.parse(readFileSync(path.join(dir, f), 'utf8'))).not.toThrow();
    expect(existsSync(path.join(inputDir, 'sec', 'backfill-state.json'))).toBe(false);
    const r = await backfillBulkArchive(client, 'submissions', { inputDir, universe: null, log: silentLogger });
    expect(r.kept).toBe(first.length);
    expect(r.kept + r.written).toBe(33);
  });
});
