/**
 * API key records in the state store (lib/api-keys.ts ApiKeyRepository), used
 * with PostgreSQL (DATABASE_URL) so that keys issued on one node are accepted
 * by every node; the embedded default keeps the key file.
 */
import type { ApiKeyRecord, ApiKeyRepository } from '../../lib/api-keys.ts';
import { insertRowsSql, loadStatements, type StateStore } from './state.store.ts';

const SQL = loadStatements('./api-keys.sql', import.meta.url, ['list', 'revoke']);
const INSERT_KEY = insertRowsSql('api_keys', {
  key_id: 'VARCHAR',
  key_sha256: 'VARCHAR',
  label: 'VARCHAR',
  tier: 'VARCHAR',
  hourly_limit: 'INTEGER',
  created_at: 'VARCHAR',
  revoked_at: 'VARCHAR',
});

export class StateApiKeyRepository implements ApiKeyRepository {
  constructor(private readonly store: StateStore) {}

  async list(): Promise<ApiKeyRecord[]> {
    return (await this.store.query(SQL.list)).map((r) => ({
      key_id: String(r.key_id),
      key_sha256: String(r.key_sha256),
      label: String(r.label),
      tier: 'pro' as const,
      hourly_limit: r.hourly_limit === null ? null : Number(r.hourly_limit),
      created_at: String(r.created_at),
      revoked_at: r.revoked_at === null ? null : String(r.revoked_at),
    }));
  }

  async add(record: ApiKeyRecord): Promise<void> {
    await this.store.write(async (tx) => tx.defer(INSERT_KEY, { ...record }));
  }

  async revoke(keyId: string, at: string): Promise<boolean> {
    return this.store.write(async (tx) => (await tx.read(SQL.revoke, [keyId, at])).length > 0);
  }
}

/** The key repository of a deployment: the database with PostgreSQL state, else none (the key file). */
export function apiKeyRepositoryFor(store: StateStore | null | undefined): ApiKeyRepository | undefined {
  return store?.backend === 'postgres' ? new StateApiKeyRepository(store) : undefined;
}
