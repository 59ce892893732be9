/**
 * `proofline credits <command>` (alias `npm run credits -- …`): administers credit accounts in the state
 * database (DATA_DIR/state/proofline-state.duckdb).
 *
 *   grant <account> <n> [--plan payg|pack_100|pack_500|enterprise]        record a purchase of n credits (creates the account);
 *                                                                         payg sells 1-99, pack_100 exactly 100, pack_500 exactly 500
 *   key <account>                                                         issue an API key bound to the account (printed once)
 *   show <account>                                                        balance and plan
 *
 * <account> is an account id; a broker's free account is `broker:<broker_id>`.
 * The API server is the only writer of the state database while it runs
 * (DuckDB: one read-write process per file), so when it holds the file this
 * CLI sends the command to the server's POST /admin/credits instead
 * (needs ADMIN_TOKEN, and PUBLIC_BASE_URL/PORT pointing at the server).
 * With DATABASE_URL (the PostgreSQL state store) every process writes: the
 * CLI writes to the database directly, whether servers run or not.
 */
import { type CreditsCommand, runCreditsCommand } from '../../service/vetting/credits.ts';
import { isLockConflict } from '../../service/platform/state.claim.ts';
import { PgStateStore } from '../../service/platform/state.postgres.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { loadCliConfig } from './cli-kit.ts';

export async function runCredits(cmd: CreditsCommand): Promise<number> {
  const config = loadCliConfig();
  let store: StateStore;
  try {
    store = config.DATABASE_URL ? await PgStateStore.open(config.DATABASE_URL) : await StateStore.open(stateDbPath(config.dataDir));
  } catch (e) {
    if (!isLockConflict(e)) throw e;
    if (!config.ADMIN_TOKEN)
      throw new Error(
        "the API server holds the state database; set ADMIN_TOKEN (the server's) to send this command to it, or stop the server",
      );
    const res = await fetch(`${config.publicBaseUrl}/admin/credits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${config.ADMIN_TOKEN}` },
      body: JSON.stringify(cmd),
    });
    console.log(JSON.stringify(await res.json(), null, 2));
    return res.ok ? 0 : 1;
  }
  try {
    console.log(JSON.stringify(await runCreditsCommand(store, config.dataDir, cmd), null, 2));
    return 0;
  } finally {
    await store.close();
  }
}
