/** Temporary data directories and configs for tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../lib/config.ts';

export async function tempDir(prefix = 'proofline-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({ DATA_DIR: dataDir, SNAPSHOT_POLL_MS: '1000', LOG_LEVEL: 'silent', ...env });
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
