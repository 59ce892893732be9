/**
 * API keys for the Pro tier. A key is shown once, at creation; only its
 * SHA-256 is stored, in `DATA_DIR/state/api-keys.json` (written atomically:
 * temp file + rename), so a leaked state file does not leak usable keys.
 * The admin CLI (`npm run apikeys`) writes the file; servers pick up changes
 * before the next request is answered (ApiKeyStore: a file watch marks the
 * set stale and the next lookup re-reads it synchronously; an unknown key is
 * checked against the file's change time before its 401).
 *
 * With the PostgreSQL state store (DATABASE_URL) the records live in the
 * database instead, so every API node on every machine sees the same keys:
 * callers pass an `ApiKeyRepository` (service/platform/api-keys.state.ts) and
 * servers re-list it at most every `recheckMs` (2 s; no file to watch).
 */
import { randomBytes } from 'node:crypto';
import { type FSWatcher, mkdirSync, readFileSync, statSync, watch } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { changedSince, unseen } from './file-change.ts';
import { sha256Hex } from './hash.ts';

export interface ApiKeyRecord {
  /** Public identifier (also the key's prefix), safe to log. */
  key_id: string;
  /** SHA-256 (hex) of the full secret key. */
  key_sha256: string;
  label: string;
  tier: 'pro';
  /** Requests per hour; null = the server's default Pro limit. */
  hourly_limit: number | null;
  created_at: string;
  revoked_at: string | null;
}

interface KeyFile {
  version: 1;
  keys: ApiKeyRecord[];
}

export const KEY_PREFIX = 'pl_';

/** Key records kept somewhere other than the key file (the PostgreSQL state store). */
export interface ApiKeyRepository {
  list(): Promise<ApiKeyRecord[]>;
  add(record: ApiKeyRecord): Promise<void>;
  /** Marks an active key revoked at `at`; false when no such active key exists. */
  revoke(keyId: string, at: string): Promise<boolean>;
}

/** Path of the key file inside a data directory. */
export function apiKeysPath(dataDir: string): string {
  return path.join(dataDir, 'state', 'api-keys.json');
}

async function readKeyFile(file: string): Promise<KeyFile> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as KeyFile;
    return { version: 1, keys: Array.isArray(parsed.keys) ? parsed.keys : [] };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, keys: [] };
    throw new Error(`cannot read API key file ${file}: ${(e as Error).message}`);
  }
}

async function writeKeyFile(file: string, data: KeyFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600 });
  await rename(tmp, file);
}

/** Hashes a presented secret the way the store does. */
export function hashApiKey(secret: string): string {
  return sha256Hex(secret);
}

/** Creates a key; returns the secret (shown once) and the stored record. */
export async function createApiKey(
  dataDir: string,
  opts: { label: string; hourlyLimit?: number | null; repository?: ApiKeyRepository },
): Promise<{ secret: string; record: ApiKeyRecord }> {
  const keyId = `${KEY_PREFIX}${randomBytes(4).toString('hex')}`;
  const secret = `${keyId}_${randomBytes(24).toString('base64url')}`;
  const record: ApiKeyRecord = {
    key_id: keyId,
    key_sha256: hashApiKey(secret),
    label: opts.label,
    tier: 'pro',
    hourly_limit: opts.hourlyLimit ?? null,
    created_at: new Date().toISOString(),
    revoked_at: null,
  };
  if (opts.repository) {
    await opts.repository.add(record);
    return { secret, record };
  }
  const file = apiKeysPath(dataDir);
  const data = await readKeyFile(file);
  data.keys.push(record);
  await writeKeyFile(file, data);
  return { secret, record };
}

/** Revokes a key by id; returns false when no such active key exists. */
export async function revokeApiKey(dataDir: string, keyId: string, repository?: ApiKeyRepository): Promise<boolean> {
  if (repository) return repository.revoke(keyId, new Date().toISOString());
  const file = apiKeysPath(dataDir);
  const data = await readKeyFile(file);
  const rec = data.keys.find((k) => k.key_id === keyId && !k.revoked_at);
  if (!rec) return false;
  rec.revoked_at = new Date().toISOString();
  await writeKeyFile(file, data);
  return true;
}

/** Every key record (hashes only). */
export async function listApiKeys(dataDir: string, repository?: ApiKeyRepository): Promise<ApiKeyRecord[]> {
  if (repository) return repository.list();
  return (await readKeyFile(apiKeysPath(dataDir))).keys;
}

/**
 * Server-side view of the key file: lookups are a Map hit. Changes apply
 * before the next request is answered (issue 25):
 * - a watch on the state directory marks the set stale when the file is
 *   replaced (the CLI writes a temp file and renames it); the next lookup
 *   re-reads it synchronously (revocations and new keys alike);
 * - a key that is not in the set is checked against the file's change time
 *   (one stat) before it is refused, so a key created a moment ago is never
 *   a 401;
 * - the change time is also re-checked every `recheckMs`, for filesystems
 *   without working watches;
 * - change times are coarse (one kernel tick), so a read within 100 ms of the
 *   change it saw is repeated at the next check (lib/file-change.ts).
 *
 * With a repository (PostgreSQL state) the set is re-listed at most every
 * `recheckMs` instead; there is no file to watch or stat.
 */
export class ApiKeyStore {
  private byHash = new Map<string, ApiKeyRecord>();
  /** SHA-256 of recently presented secrets, so a request costs a Map hit rather than a hash (the records stay keyed by hash). */
  private readonly hashMemo = new Map<string, string>();
  /** The key file's change time at the last read (lib/file-change.ts: same-tick writes are read again). */
  private readonly seen = unseen();
  private lastCheck = 0;
  private checking: Promise<void> | null = null;
  private stale = false;
  private watcher: FSWatcher | null = null;
  /** Bumped each time the key set is re-read: whatever was derived from earlier lookups (memoised identities) is stale. */
  generation = 0;

  private repoSignature = '';

  constructor(
    readonly dataDir: string,
    private readonly recheckMs = 2000,
    private readonly repository?: ApiKeyRepository,
  ) {}

  private get file(): string {
    return apiKeysPath(this.dataDir);
  }

  private apply(data: KeyFile): void {
    const next = new Map<string, ApiKeyRecord>();
    for (const k of data.keys) if (!k.revoked_at) next.set(k.key_sha256, k);
    this.byHash = next;
    this.generation++;
  }

  /** Loads the file (or repository) now (call once at startup) and starts watching the file. */
  async load(): Promise<void> {
    if (this.repository) return this.loadRepository(this.repository);
    const st = await stat(this.file).catch(() => null);
    this.lastCheck = Date.now();
    this.startWatch();
    if (!changedSince(this.seen, st)) return;
    try {
      this.apply(await readKeyFile(this.file));
    } catch (e) {
      this.seen.change = -1; // not read: the next check tries again
      throw e;
    }
  }

  private async loadRepository(repository: ApiKeyRepository): Promise<void> {
    this.lastCheck = Date.now();
    const keys = await repository.list();
    const signature = JSON.stringify(keys.map((k) => [k.key_id, k.revoked_at, k.hourly_limit]));
    if (signature === this.repoSignature) return;
    this.byHash = new Map(keys.filter((k) => !k.revoked_at).map((k) => [k.key_sha256, k]));
    this.repoSignature = signature;
    this.generation++;
  }

  /**
   * Re-reads the file synchronously when its change time moved, or was seen within one clock grain of the last read
   * (a revocation written in the same tick as the creation before it: lib/file-change.ts); a few µs when it did not.
   * Nothing with a repository.
   */
  private reloadSyncIfChanged(): void {
    if (this.repository) return;
    this.stale = false;
    this.lastCheck = Date.now();
    let st: { mtimeMs: number; ctimeMs: number } | null = null;
    try {
      st = statSync(this.file);
    } catch {
      st = null;
    }
    if (!changedSince(this.seen, st)) return;
    let data: KeyFile = { version: 1, keys: [] };
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as KeyFile;
      data = { version: 1, keys: Array.isArray(parsed.keys) ? parsed.keys : [] };
    } catch (e) {
      // A file caught mid-write cannot happen (rename is atomic); an unreadable one keeps the previous set, and the
      // next check tries again (a read can fail for a moment: EMFILE).
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.seen.change = -1;
        return;
      }
    }
    this.apply(data);
  }

  private startWatch(): void {
    if (this.watcher || this.repository) return;
    try {
      const dir = path.dirname(this.file);
      mkdirSync(dir, { recursive: true });
      const name = path.basename(this.file);
      this.watcher = watch(dir, { persistent: false }, (_event, filename) => {
        if (filename === null || filename === name) this.stale = true;
      });
      this.watcher.on('error', () => {
        this.watcher = null; // fall back to the periodic change-time check
      });
    } catch {
      this.watcher = null;
    }
  }

  /** Applies a change the watch saw (synchronously), else re-checks when the last check is older than `recheckMs`. */
  recheck(): void {
    if (this.stale) {
      this.reloadSyncIfChanged();
      return;
    }
    if (Date.now() - this.lastCheck > this.recheckMs && !this.checking) {
      this.checking = this.load()
        .catch(() => undefined)
        .finally(() => (this.checking = null));
    }
  }

  /** The active record for a presented secret, or null (unknown or revoked). */
  lookup(secret: string): ApiKeyRecord | null {
    this.recheck();
    let hash = this.hashMemo.get(secret);
    if (hash === undefined) {
      hash = hashApiKey(secret);
      // Bounded: a flood of random bearer tokens must not grow memory (they all miss and answer 401).
      if (this.hashMemo.size >= 10_000) this.hashMemo.clear();
      this.hashMemo.set(secret, hash);
    }
    const hit = this.byHash.get(hash);
    if (hit) return hit;
    // Not known: a key created since the last read must not be refused, so look at the file once more.
    this.reloadSyncIfChanged();
    return this.byHash.get(hash) ?? null;
  }

  /** Resolves once any pending re-read has finished (tests). */
  async settle(): Promise<void> {
    await this.checking;
  }

  /** Stops watching the file. */
  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }
}
