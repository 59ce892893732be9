/**
 * The one writer of fetched files (jobs/fetched-file.ts): bytes or a stream go
 * to disk with the SHA-256 taken while writing, the sidecar says what was
 * fetched, a failed stream leaves neither a file nor a temp file, and a file
 * whose bytes no longer match its sidecar is not taken as complete.
 */
import { existsSync } from 'node:fs';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCompleteFetched, removeFetchedFile, writeFetchedFile } from '../../jobs/fetched-file.ts';
import { sha256Hex } from '../../lib/hash.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

describe('writeFetchedFile', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await removeDir(d);
  });

  it('writes bytes and the sidecar as given, and a streamed body with its hash computed while writing', async () => {
    const dir = await tempDir('proofline-fetched-');
    dirs.push(dir);
    const file = path.join(dir, 'a', 'b.json');
    const bytes = Buffer.from('{"x":1}');
    const w = await writeFetchedFile(file, bytes, {
      source_url: 'https://example.test/b.json',
      retrieved_at: '2026-01-01T00:00:00.000Z',
      sha256: sha256Hex(bytes),
    });
    expect(w.sha256).toBe(sha256Hex(bytes));
    expect(await readFile(file, 'utf8')).toBe('{"x":1}');
    expect(await readFile(`${file}.meta.json`, 'utf8')).toBe(
      JSON.stringify(
        { source_url: 'https://example.test/b.json', retrieved_at: '2026-01-01T00:00:00.000Z', sha256: sha256Hex(bytes) },
        null,
        2,
      ),
    );
    expect(await readCompleteFetched(file)).not.toBeNull();

    const big = path.join(dir, 'big.csv');
    async function* chunks() {
      for (let i = 0; i < 100; i++) yield Buffer.from(`row ${i}\n`);
    }
    const all = Buffer.from(Array.from({ length: 100 }, (_, i) => `row ${i}\n`).join(''));
    const s = await writeFetchedFile(big, chunks(), (h) => ({ source_url: 'u', sha256: h.sha256, bytes: h.bytes }));
    expect(s).toMatchObject({ sha256: sha256Hex(all), bytes: all.length });
    expect(JSON.parse(await readFile(`${big}.meta.json`, 'utf8'))).toEqual({ source_url: 'u', sha256: sha256Hex(all), bytes: all.length });
  });

  it('leaves nothing under the name when the body fails mid-way, and rejects a file changed after fetching', async () => {
    const dir = await tempDir('proofline-fetched-');
    dirs.push(dir);
    const file = path.join(dir, 'c.txt');
    async function* broken() {
      yield Buffer.from('half of it');
      throw new Error('connection reset');
    }
    await expect(writeFetchedFile(file, broken(), { source_url: 'u' })).rejects.toThrow(/connection reset/);
    expect(existsSync(file)).toBe(false);
    expect(await readdir(dir)).toEqual([]);

    await writeFetchedFile(file, Buffer.from('whole'), { source_url: 'u', sha256: sha256Hex(Buffer.from('whole')) });
    await appendFile(file, ' and more');
    expect(await readCompleteFetched(file)).toBeNull();
    await removeFetchedFile(file);
    expect(await readdir(dir)).toEqual([]);
  });
});
