/**
 * PostgreSQL for the state suites: DATABASE_URL from the environment (CI
 * starts a throwaway server, .ci/run). Without it, the PostgreSQL half of
 * each suite skips with a visible notice, except under REQUIRE_POSTGRES=1
 * where a missing or unreachable server fails. Each suite gets its own fresh
 * database (`freshDatabase`), dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export const DATABASE_URL = process.env.DATABASE_URL || undefined;

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => undefined });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => undefined);
  }
}

export const HAS_POSTGRES = DATABASE_URL ? await reachable(DATABASE_URL) : false;
if (!HAS_POSTGRES) {
  if (process.env.REQUIRE_POSTGRES === '1')
    throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL is not reachable at ${DATABASE_URL ?? '(DATABASE_URL unset)'}`);
  console.warn('[proofline tests] no PostgreSQL (set DATABASE_URL): the PostgreSQL state suites are skipped');
}

/** Creates an empty database on DATABASE_URL's server; `drop` removes it (ending its sessions first). */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `proofline_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(DATABASE_URL!, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(DATABASE_URL!);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const a = postgres(DATABASE_URL!, { max: 1, onnotice: () => undefined });
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await a.end();
    },
  };
}
