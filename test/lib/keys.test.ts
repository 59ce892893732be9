/**
 * The signing key file (lib/keys.ts): created once, whole, whoever starts first. Two API nodes starting at once on
 * one DATA_DIR must end with one key, and neither may read a half-written PEM (it did: ERR_OSSL_UNSUPPORTED).
 */
import { spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateSigningKey } from '../../lib/keys.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let dir: string;
beforeAll(async () => {
  dir = await tempDir('proofline-keys-');
});
afterAll(async () => {
  if (dir) await removeDir(dir);
});

/** A separate process that loads or creates the key at `file` and prints its key id. */
function keyIdInProcess(file: string): Promise<string> {
  const script = `import { loadOrCreateSigningKey } from ${JSON.stringify(path.join(ROOT, 'lib/keys.ts'))};
    process.stdout.write((await loadOrCreateSigningKey(${JSON.stringify(file)})).keyId);`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += String(d)));
    p.stderr.on('data', (d) => (err += String(d)));
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

describe('loadOrCreateSigningKey', () => {
  it('gives every concurrent caller the same key, created once with mode 600, leaving no temporary file', async () => {
    const file = path.join(dir, 'a', 'ed25519.pem');
    const keys = await Promise.all(Array.from({ length: 12 }, () => loadOrCreateSigningKey(file)));
    expect(new Set(keys.map((k) => k.keyId)).size).toBe(1);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(path.dirname(file))).toEqual(['ed25519.pem']);
    expect((await loadOrCreateSigningKey(file)).keyId).toBe(keys[0]!.keyId);
  });

  it('gives processes racing to create it one key', async () => {
    const file = path.join(dir, 'b', 'ed25519.pem');
    const ids = await Promise.all(Array.from({ length: 4 }, () => keyIdInProcess(file)));
    expect(ids[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(ids).size).toBe(1);
    expect(await readdir(path.dirname(file))).toEqual(['ed25519.pem']);
  });
});
