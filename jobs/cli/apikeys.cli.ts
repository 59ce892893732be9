/**
 * `npm run apikeys -- create --label "Acme" [--limit 20000]` | `revoke <key_id>` | `list`
 *
 * Admin CLI for Pro-tier API keys in DATA_DIR/state/api-keys.json, or in the
 * PostgreSQL state database with DATABASE_URL (shared by every node). `create`
 * prints the secret once (only its SHA-256 is stored). Running servers pick up
 * changes within a few seconds.
 */
import { loadConfig, type Config } from '../../lib/config.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../../lib/api-keys.ts';
import { StateApiKeyRepository } from '../../service/platform/api-keys.state.ts';
import { PgStateStore } from '../../service/platform/state.postgres.ts';

function usage(msg?: string): never {
  if (msg) console.error(msg);
  console.error('usage: npm run apikeys -- create --label <label> [--limit <requests per hour>] | revoke <key_id> | list');
  process.exit(2);
}

const [cmd, ...rest] = process.argv.slice(2);
let config: Config;
try {
  config = loadConfig(process.env);
} catch (e) {
  console.error((e as Error).message);
  process.exit(2);
}
const state = config.DATABASE_URL ? await PgStateStore.open(config.DATABASE_URL) : null;
const repository = state ? new StateApiKeyRepository(state) : undefined;
if (cmd === 'create') {
  let label = '';
  let limit: number | null = null;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--label') label = rest[++i] ?? '';
    else if (rest[i] === '--limit') {
      limit = Number(rest[++i]);
      if (!Number.isInteger(limit) || limit < 1) usage('--limit must be a positive integer');
    } else usage(`unknown argument ${rest[i]}`);
  }
  if (!label) usage('--label is required');
  const { secret, record } = await createApiKey(config.dataDir, { label, hourlyLimit: limit, repository });
  console.log(
    `created ${record.key_id} (${record.label}, ${record.hourly_limit ?? `default ${config.RATE_LIMIT_PRO_PER_HOUR}`} requests/hour)`,
  );
  console.log(`secret (shown once; send as "Authorization: Bearer <secret>"):\n${secret}`);
} else if (cmd === 'revoke') {
  const id = rest[0];
  if (!id) usage('revoke needs a key_id');
  if (await revokeApiKey(config.dataDir, id, repository)) console.log(`revoked ${id}`);
  else {
    console.error(`no active key ${id}`);
    process.exit(1);
  }
} else if (cmd === 'list') {
  const keys = await listApiKeys(config.dataDir, repository);
  if (keys.length === 0) console.log('no keys');
  for (const k of keys)
    console.log(
      `${k.key_id}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}\t${k.hourly_limit ?? 'default'}/h\t${k.created_at}\t${k.label}`,
    );
} else usage();
await state?.close();
