/**
 * `proofline apikeys create --label "Acme" [--limit 20000]` | `revoke <key_id>` | `list` (alias `npm run apikeys -- …`)
 *
 * Admin CLI for Pro-tier API keys in DATA_DIR/state/api-keys.json, or in the
 * PostgreSQL state database with DATABASE_URL (shared by every node). `create`
 * prints the secret once (only its SHA-256 is stored). Running servers pick up
 * changes within a few seconds.
 */
import { createApiKey, listApiKeys, revokeApiKey } from '../../lib/api-keys.ts';
import { StateApiKeyRepository } from '../../service/platform/api-keys.state.ts';
import { PgStateStore } from '../../service/platform/state.postgres.ts';
import { loadCliConfig } from './cli-kit.ts';

export async function runApiKeys(
  cmd: 'create' | 'revoke' | 'list',
  args: { label?: string; limit?: number; keyId?: string },
): Promise<number> {
  const config = loadCliConfig();
  // With DATABASE_URL the keys live in the PostgreSQL state database, shared by every node.
  const state = config.DATABASE_URL ? await PgStateStore.open(config.DATABASE_URL) : null;
  try {
    return await runOn(cmd, args, config, state ? new StateApiKeyRepository(state) : undefined);
  } finally {
    await state?.close();
  }
}

async function runOn(
  cmd: 'create' | 'revoke' | 'list',
  args: { label?: string; limit?: number; keyId?: string },
  config: ReturnType<typeof loadCliConfig>,
  repository: StateApiKeyRepository | undefined,
): Promise<number> {
  if (cmd === 'create') {
    const { secret, record } = await createApiKey(config.dataDir, { label: args.label!, hourlyLimit: args.limit ?? null, repository });
    console.log(
      `created ${record.key_id} (${record.label}, ${record.hourly_limit ?? `default ${config.RATE_LIMIT_PRO_PER_HOUR}`} requests/hour)`,
    );
    console.log(`secret (shown once; send as "Authorization: Bearer <secret>"):\n${secret}`);
    return 0;
  }
  if (cmd === 'revoke') {
    if (await revokeApiKey(config.dataDir, args.keyId!, repository)) {
      console.log(`revoked ${args.keyId}`);
      return 0;
    }
    console.error(`no active key ${args.keyId}`);
    return 1;
  }
  const keys = await listApiKeys(config.dataDir, repository);
  if (keys.length === 0) console.log('no keys');
  for (const k of keys)
    console.log(
      `${k.key_id}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}\t${k.hourly_limit ?? 'default'}/h\t${k.created_at}\t${k.label}`,
    );
  return 0;
}
