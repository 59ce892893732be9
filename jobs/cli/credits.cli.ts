/**
 * `npm run credits -- <command>`: administers credit accounts in the state
 * database (DATA_DIR/state/proofline-state.duckdb).
 *
 *   grant <account> <n> [--plan free|payg|pack_100|pack_500|enterprise]   add n credits (creates the account)
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
import { loadConfig } from '../../lib/config.ts';
import { planIdSchema, runCreditsCommand, type CreditsCommand, type PlanId } from '../../service/vetting/credits.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { PgStateStore } from '../../service/platform/state.postgres.ts';
import { isLockConflict } from '../../service/platform/state.claim.ts';

const USAGE =
  'usage: npm run credits -- grant <account> <n> [--plan free|payg|pack_100|pack_500|enterprise] | key <account> | show <account>';

/** Parses CLI arguments; throws with the usage text on anything malformed. */
export function parseCreditsArgs(argv: string[]): CreditsCommand {
  const args = [...argv];
  let plan: PlanId | undefined;
  const pi = args.indexOf('--plan');
  if (pi >= 0) {
    const p = planIdSchema.safeParse(args[pi + 1]);
    if (!p.success) throw new Error(`unknown plan ${args[pi + 1]}\n${USAGE}`);
    plan = p.data;
    args.splice(pi, 2);
  }
  const [op, account, n] = args;
  if (!account || !['grant', 'key', 'show'].includes(op ?? '')) throw new Error(USAGE);
  if (op === 'grant') {
    if (!n || !/^\d+$/.test(n)) throw new Error(`grant needs a whole number of credits\n${USAGE}`);
    return { op, account, n: Number(n), plan };
  }
  return { op: op as 'key' | 'show', account };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = loadConfig(process.env);
  let cmd: CreditsCommand;
  try {
    cmd = parseCreditsArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  let store: StateStore | null = null;
  try {
    store = config.DATABASE_URL ? await PgStateStore.open(config.DATABASE_URL) : await StateStore.open(stateDbPath(config.dataDir));
  } catch (e) {
    if (!isLockConflict(e)) throw e;
    if (!config.ADMIN_TOKEN) {
      console.error(
        "the API server holds the state database; set ADMIN_TOKEN (the server's) to send this command to it, or stop the server",
      );
      process.exit(1);
    }
    const res = await fetch(`${config.publicBaseUrl}/admin/credits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${config.ADMIN_TOKEN}` },
      body: JSON.stringify(cmd),
    });
    console.log(JSON.stringify(await res.json(), null, 2));
    process.exit(res.ok ? 0 : 1);
  }
  try {
    console.log(JSON.stringify(await runCreditsCommand(store, config.dataDir, cmd), null, 2));
  } catch (e) {
    console.error((e as Error).message);
    process.exitCode = 1;
  } finally {
    await store.close();
  }
}
