/** `proofline discover`: exit codes, human and JSON output, bookmarks and re-verification. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../jobs/cli/discover.cli.ts';
import { REPO_ROOT } from '../helpers/shared.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { json, manifestFor, sealed, serveSite, type Site } from './discovery-helpers.ts';

const run = promisify(execFile);
let site: Site;
let dir: string;
beforeAll(async () => {
  site = await serveSite();
  dir = await tempDir('proofline-discover-cli-');
});
afterAll(async () => {
  await site.close();
  await removeDir(dir);
});
afterEach(() => vi.restoreAllMocks());

function capture(): { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  return { out: () => out.join('\n'), err: () => err.join('\n') };
}

describe('proofline discover', () => {
  it('runs as the proofline command from any directory and prints the JSON report', async () => {
    site.routes.set('/.well-known/ai', json(sealed(manifestFor(site.url))));
    // The `proofline` bin, run from outside the repository.
    const { stdout } = await run(
      process.execPath,
      [path.join(REPO_ROOT, 'jobs/cli/proofline.bin.mjs'), 'discover', site.url, '--allow-private', '--json', '--no-files'],
      { cwd: dir },
    );
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ found: true, foundBy: 'well-known', manifest: { hash: { status: 'match' }, tier: 2 } });
  });

  it('prints a human summary and exits 0 when consistent, 1 on a mismatch, 3 with no manifest', async () => {
    site.routes.set('/.well-known/ai', json(sealed(manifestFor(site.url))));
    let c = capture();
    expect(await main([site.url, '--allow-private', '--no-files'])).toBe(0);
    expect(c.out()).toMatch(/Found by: +well-known/);
    expect(c.out()).toMatch(/Manifest: +hash match, tier 2/);

    const tampered = sealed(manifestFor(site.url));
    tampered.generated = '2030-01-01T00:00:00Z';
    site.routes.set('/.well-known/ai', json(tampered));
    c = capture();
    expect(await main([site.url, '--allow-private', '--no-files'])).toBe(1);
    expect(c.out()).toMatch(/hash mismatch/);

    site.routes.delete('/.well-known/ai');
    c = capture();
    expect(await main([site.url, '--allow-private'])).toBe(3);
    expect(c.out()).toMatch(/no manifest/);
  });

  it('refuses loopback targets without --allow-private (exit 2) and rejects bad usage', async () => {
    const c = capture();
    expect(await main([site.url])).toBe(2);
    expect(c.err()).toMatch(/blocked-target.*--allow-private/);
    expect(await main([])).toBe(2);
    expect(await main([site.url, '--timeout', 'soon'])).toBe(2);
  });

  it('writes a bookmark and re-verifies it', async () => {
    site.routes.set('/.well-known/ai', json(sealed(manifestFor(site.url))));
    const file = path.join(dir, 'bookmark.json');
    capture();
    expect(await main([site.url, '--allow-private', '--no-files', '--bookmark-out', file])).toBe(0);
    const bookmark = JSON.parse(await readFile(file, 'utf8'));
    expect(bookmark.pinnedResources).toHaveLength(1);
    const c = capture();
    expect(await main(['--reverify', file, '--allow-private', '--no-files'])).toBe(0);
    expect(c.out()).toMatch(/Verdict: same/);
    site.routes.set('/.well-known/ai', json(sealed(manifestFor(site.url, { generated: '2026-12-01T00:00:00Z' }))));
    expect(await main(['--reverify', file, '--allow-private', '--no-files'])).toBe(1);
    expect(c.out()).toMatch(/Verdict: integrity-issue/);
  });
});
