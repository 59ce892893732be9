/**
 * Credit accounts and plans. A vetting record costs one credit; lookups and
 * previews are free; credits never expire (there is no expiry column and no
 * job that removes credits). A request carries an API key (Authorization:
 * Bearer) naming a paid account, or runs on the broker_id's free account,
 * created on first use with the Free plan's signup credits.
 *
 * Every function taking a `StateTx` runs inside a state store transaction
 * that holds the account's lock (`tx.lock('acct:<id>')`, taken before the
 * balance is read), so a balance check and the debit that follows it cannot
 * interleave with another request's, on this node or any other (no double
 * spending). Checks throw before the operation's first write (see state.store.ts).
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InvalidInputError, NotFoundError, PaymentRequiredError } from '../../lib/errors.ts';
import { createApiKey, hashApiKey } from '../../lib/api-keys.ts';
import { apiKeyRepositoryFor } from '../platform/api-keys.state.ts';
import { insertRowsSql, loadStatements, updateRowsSql, type StateStore, type StateTx } from '../platform/state.store.ts';

const SQL = loadStatements('./vetting.state.sql', import.meta.url, ['account_by_id', 'account_by_key']);

/**
 * Plans, as spec 001's Limits table publishes them (`001_2c993ec8aa6fda8f.txt`, "Limits"): prices, what a
 * purchase may buy (`purchase`: the credits one grant of this plan may carry; null = not bought), credits at
 * signup and the largest batch one /api/batch-vet call may carry (null = no cap). No subscriptions or monthly
 * fees; one credit per vetting record; credits never expire.
 */
export const PLANS = {
  free: {
    label: 'Free',
    price: 'free',
    price_usd: 0,
    usd_per_credit: 0,
    signup_credits: 30,
    purchase: null,
    batch_limit: 10,
    unlimited: false,
  },
  payg: {
    label: 'Pay as you go',
    price: '$10 per record',
    price_usd: null,
    usd_per_credit: 10,
    signup_credits: 0,
    purchase: { min: 1, max: 99 },
    batch_limit: 100,
    unlimited: false,
  },
  pack_100: {
    label: '100-pack',
    price: '$900 ($9 per record)',
    price_usd: 900,
    usd_per_credit: 9,
    signup_credits: 0,
    purchase: { min: 100, max: 100 },
    batch_limit: 100,
    unlimited: false,
  },
  pack_500: {
    label: '500-pack',
    price: '$4,000 ($8 per record)',
    price_usd: 4000,
    usd_per_credit: 8,
    signup_credits: 0,
    purchase: { min: 500, max: 500 },
    batch_limit: 500,
    unlimited: false,
  },
  // Enterprise: volume pricing, credits unlimited, batches not capped (spec 001: batch size "unlimited").
  enterprise: {
    label: 'Enterprise',
    price: 'volume pricing',
    price_usd: null,
    usd_per_credit: null,
    signup_credits: 0,
    purchase: null,
    batch_limit: null,
    unlimited: true,
  },
} as const satisfies Record<
  string,
  {
    label: string;
    price: string;
    price_usd: number | null;
    usd_per_credit: number | null;
    signup_credits: number;
    purchase: { min: number; max: number } | null;
    batch_limit: number | null;
    unlimited: boolean;
  }
>;

export type PlanId = keyof typeof PLANS;
export const planIdSchema = z.enum(Object.keys(PLANS) as [PlanId, ...PlanId[]]);

export interface Account {
  account_id: string;
  plan: PlanId;
  balance: number;
  created_at: string;
}

/** Account id of a broker's free account. */
export function freeAccountId(brokerId: string): string {
  return `broker:${brokerId}`;
}

const acctKey = (id: string) => `acct:${id}`;

const INSERT_ACCOUNT = insertRowsSql('accounts', {
  account_id: 'VARCHAR',
  plan: 'VARCHAR',
  balance: 'BIGINT',
  api_key_sha256: 'VARCHAR',
  created_at: 'VARCHAR',
  updated_at: 'VARCHAR',
});
const UPDATE_BALANCE = updateRowsSql('accounts', 'account_id', {
  account_id: 'VARCHAR',
  plan: 'VARCHAR',
  balance: 'BIGINT',
  updated_at: 'VARCHAR',
});
const UPDATE_KEY = updateRowsSql('accounts', 'account_id', { account_id: 'VARCHAR', api_key_sha256: 'VARCHAR', updated_at: 'VARCHAR' });
const INSERT_LEDGER = insertRowsSql('credit_ledger', {
  entry_id: 'VARCHAR',
  account_id: 'VARCHAR',
  delta: 'BIGINT',
  balance_after: 'BIGINT',
  reason: 'VARCHAR',
  created_at: 'VARCHAR',
});

async function selectAccount(tx: StateTx, accountId: string): Promise<Account | null> {
  const rows = await tx.read(SQL.account_by_id, [accountId]);
  return rows[0]
    ? {
        account_id: String(rows[0].account_id),
        plan: rows[0].plan as PlanId,
        balance: Number(rows[0].balance),
        created_at: String(rows[0].created_at),
      }
    : null;
}

/**
 * Reads an account inside the writer transaction, under the account's lock
 * unless its plan is unlimited (nothing to debit, so nothing to race on: every
 * node vets on it without waiting for the others). Cached while valid.
 */
export async function readAccount(tx: StateTx, accountId: string): Promise<Account | null> {
  const k = acctKey(accountId);
  if (tx.cache.has(k)) return tx.cache.get(k) as Account | null;
  let a = await selectAccount(tx, accountId);
  // A balance is decided on under the lock: re-read it once the lock is ours (another node may have just debited it).
  if (!(a && PLANS[a.plan].unlimited) && (await tx.lock(k))) a = await selectAccount(tx, accountId);
  tx.cache.set(k, a);
  return a;
}

/** Creates an account (with its plan's signup credits and a ledger line). Throws if it exists. */
export async function createAccount(tx: StateTx, accountId: string, plan: PlanId, now: Date): Promise<Account> {
  await tx.lock(acctKey(accountId));
  const at = now.toISOString();
  const credits = PLANS[plan].signup_credits;
  tx.defer(INSERT_ACCOUNT, { account_id: accountId, plan, balance: credits, api_key_sha256: null, created_at: at, updated_at: at });
  insertLedger(tx, accountId, credits, credits, 'signup', at);
  const a: Account = { account_id: accountId, plan, balance: credits, created_at: at };
  tx.cache.set(acctKey(accountId), a);
  return a;
}

function insertLedger(tx: StateTx, accountId: string, delta: number, after: number, reason: string, at: string): void {
  tx.defer(INSERT_LEDGER, {
    entry_id: `CRD-${randomBytes(8).toString('hex')}`,
    account_id: accountId,
    delta,
    balance_after: after,
    reason,
    created_at: at,
  });
}

/**
 * The account a request runs on: the credit account bound to the request's
 * API key (the project's API keys, lib/api-keys.ts; the API layer has already
 * rejected unknown keys with 401), else the broker's free account (created
 * with 30 credits on first use). Writes only when creating.
 */
export async function resolveAccount(tx: StateTx, auth: { apiKey?: string | null; brokerId: string | null }, now: Date): Promise<Account> {
  if (auth.apiKey) {
    // Cached per key (a read on the writer connection would serialise every vetting of the group behind it).
    const h = hashApiKey(auth.apiKey);
    const ck = `key:${h}`;
    let accountId = tx.cache.get(ck) as string | null | undefined;
    if (accountId === undefined) {
      const rows = await tx.read(SQL.account_by_key, [h]);
      accountId = rows[0] ? String(rows[0].account_id) : null;
      tx.cache.set(ck, accountId);
    }
    if (accountId) return (await readAccount(tx, accountId))!;
  }
  if (!auth.brokerId)
    throw new InvalidInputError('give broker_id: this API key has no credit account', { response: { parameter: 'broker_id' } });
  const id = freeAccountId(auth.brokerId);
  return (await readAccount(tx, id)) ?? createAccount(tx, id, 'free', now);
}

/** Throws PaymentRequiredError unless `account` can pay `n` credits. No write. */
export function assertCanPay(account: Account, n: number): void {
  const plan = PLANS[account.plan];
  if (plan.unlimited || account.balance >= n) return;
  throw new PaymentRequiredError(
    `insufficient credits: this needs ${n} credit${n === 1 ? '' : 's'} and account ${account.account_id} has ${account.balance}`,
    {
      response: {
        account_id: account.account_id,
        plan: account.plan,
        balance: account.balance,
        required: n,
        hint: 'buy a pack or ask an administrator: npm run credits -- grant <account> <n>',
      },
    },
  );
}

/** Throws InvalidInputError when a batch is larger than the plan allows (Enterprise: no cap). */
export function assertBatchSize(account: Account, size: number): void {
  const limit: number | null = PLANS[account.plan].batch_limit;
  if (limit !== null && size > limit) {
    throw new InvalidInputError(
      `batch of ${size} exceeds the ${PLANS[account.plan].label} plan limit of ${limit} DOT numbers per request`,
      {
        response: { parameter: 'dot_numbers', plan: account.plan, batch_limit: limit, requested: size },
      },
    );
  }
}

/** Debits `n` credits (nothing for unlimited plans). Call assertCanPay first, before any write. */
export async function debit(tx: StateTx, account: Account, n: number, now: Date): Promise<Account> {
  assertCanPay(account, n);
  if (PLANS[account.plan].unlimited || n === 0) return account;
  const next = { ...account, balance: account.balance - n };
  tx.defer(
    UPDATE_BALANCE,
    { account_id: next.account_id, plan: next.plan, balance: next.balance, updated_at: now.toISOString() },
    next.account_id,
  );
  tx.cache.set(acctKey(account.account_id), next);
  return next;
}

/**
 * Throws InvalidInputError naming the field unless `n` credits are a purchase `plan` sells (spec 001 Limits):
 * pay-as-you-go 1 to 99, the packs exactly 100 and 500, Enterprise any number (volume pricing); Free is not
 * bought (its 30 credits come at signup).
 */
export function assertPurchase(plan: PlanId, n: number): void {
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidInputError('credits to grant must be a non-negative integer', { response: { parameter: 'n' } });
  const p = PLANS[plan];
  if (plan === 'enterprise') return;
  if (p.purchase === null)
    throw new InvalidInputError(
      `the ${p.label} plan is not bought (its ${p.signup_credits} credits come at signup): choose payg, pack_100 or pack_500`,
      {
        response: { parameter: 'plan', plan },
      },
    );
  if (n < p.purchase.min || n > p.purchase.max)
    throw new InvalidInputError(
      p.purchase.min === p.purchase.max
        ? `the ${p.label} plan sells exactly ${p.purchase.min} credits, got ${n}`
        : `the ${p.label} plan sells ${p.purchase.min} to ${p.purchase.max} credits, got ${n}`,
      { response: { parameter: 'n', plan, min: p.purchase.min, max: p.purchase.max, requested: n } },
    );
}

/**
 * Admin: records a purchase of `n` credits on `plan` (default: the account's plan; a new account defaults to
 * payg), creating the account. The amount must be one the plan sells (assertPurchase), checked before any write.
 */
export async function grantCredits(store: StateStore, accountId: string, n: number, plan: PlanId | undefined, now: Date): Promise<Account> {
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidInputError('credits to grant must be a non-negative integer', { response: { parameter: 'n' } });
  return store.write(async (tx) => {
    await tx.lock(acctKey(accountId)); // before the read: a grant changes even an unlimited account
    const at = now.toISOString();
    const existing = await readAccount(tx, accountId);
    assertPurchase(plan ?? existing?.plan ?? 'payg', n);
    const a = existing ?? (await createAccount(tx, accountId, plan ?? 'payg', now));
    const next: Account = { ...a, plan: plan ?? a.plan, balance: a.balance + n };
    tx.defer(UPDATE_BALANCE, { account_id: accountId, plan: next.plan, balance: next.balance, updated_at: at }, accountId);
    insertLedger(tx, accountId, n, next.balance, plan ? `grant (plan ${plan})` : 'grant', at);
    tx.cache.set(acctKey(accountId), next);
    return next;
  });
}

/**
 * Admin: issues a project API key (lib/api-keys.ts, so the API layer accepts
 * it) and binds it to a credit account (replacing a previous binding).
 * Returns the secret, shown once; only its SHA-256 is stored.
 */
export async function issueApiKey(
  store: StateStore,
  dataDir: string,
  accountId: string,
  now: Date,
  opts: { hourlyLimit?: number | null } = {},
): Promise<{ api_key: string; key_id: string }> {
  const existing = await getAccount(store, accountId);
  if (!existing)
    throw new InvalidInputError(`account ${accountId} does not exist: grant credits first`, { response: { parameter: 'account' } });
  const { secret, record } = await createApiKey(dataDir, {
    label: `credits:${accountId}`,
    hourlyLimit: opts.hourlyLimit ?? null,
    repository: apiKeyRepositoryFor(store), // PostgreSQL state: in the database, for every node
  });
  await store.write(async (tx) => {
    await tx.lock(acctKey(accountId));
    tx.defer(UPDATE_KEY, { account_id: accountId, api_key_sha256: hashApiKey(secret), updated_at: now.toISOString() }, accountId);
    // key → account entries may now be stale (a rebinding replaces the account's previous key). Only those:
    // balances and chain heads in the cache may hold this group's not yet flushed values.
    for (const k of [...tx.cache.keys()]) if (k.startsWith('key:')) tx.cache.delete(k);
  });
  return { api_key: secret, key_id: record.key_id };
}

/** Reads an account's balance outside a transaction (committed state). */
export async function getAccount(store: StateStore, accountId: string): Promise<Account | null> {
  const rows = await store.query(SQL.account_by_id, [accountId]);
  return rows[0]
    ? {
        account_id: String(rows[0].account_id),
        plan: rows[0].plan as PlanId,
        balance: Number(rows[0].balance),
        created_at: String(rows[0].created_at),
      }
    : null;
}

/** An administrative credits command (the `credits` CLI and POST /admin/credits). */
export interface CreditsCommand {
  op: 'grant' | 'key' | 'show';
  account: string;
  n?: number;
  plan?: PlanId;
}

/** Runs a command against an open store; returns what to print. */
export async function runCreditsCommand(
  store: StateStore,
  dataDir: string,
  cmd: CreditsCommand,
  now = new Date(),
): Promise<Record<string, unknown>> {
  if (cmd.op === 'grant') return { granted: cmd.n, account: await grantCredits(store, cmd.account, cmd.n!, cmd.plan, now) };
  if (cmd.op === 'key')
    return {
      account_id: cmd.account,
      ...(await issueApiKey(store, dataDir, cmd.account, now)),
      note: 'shown once; send as Authorization: Bearer <api_key>',
    };
  const a = await getAccount(store, cmd.account);
  if (!a) throw new NotFoundError(`account ${cmd.account} does not exist`, { response: { account: cmd.account } });
  return { account: a };
}
