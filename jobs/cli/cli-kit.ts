/**
 * What every `proofline` subcommand shares (jobs/cli/proofline.cli.ts): the usage error, the exit-code rule, the
 * configuration and Redis checks, so a CLI never ends with a stack trace.
 *
 * Exit codes (docs/operations.md#commands): 0 success, 1 failure (the command ran and something failed: a job, a
 * query, an unreachable Redis), 2 usage (bad flag, unknown domain or subcommand, invalid configuration, a command
 * that needs REDIS_URL run without it).
 */
import { Redis } from 'ioredis';
import { type Config, loadConfig } from '../../lib/config.ts';

/** A command line (or environment) the command cannot run with: exit code 2, message only. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Exit code of an error that ended a command: 2 for usage errors, 1 for anything else. */
export function exitCodeOf(err: unknown): 1 | 2 {
  return err instanceof UsageError ? 2 : 1;
}

/** One line for the operator: the message, never the stack (the cause's message when it adds something). */
export function describeCliError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error && !err.message.includes(err.cause.message) ? ` (${err.cause.message})` : '';
  return `${err.message}${cause}`;
}

/** The configuration from the environment; an invalid variable is a usage error naming it. */
export function loadCliConfig(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** REDIS_URL without its password, for messages. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable REDIS_URL)';
  }
}

/**
 * Fails fast when Redis does not answer: BullMQ and ioredis otherwise retry forever and the command hangs.
 * No REDIS_URL is a usage error (`what` names the command); an unreachable one a failure (exit 1).
 */
export async function requireRedis(config: Config, what: string, timeoutMs = 3000): Promise<string> {
  if (!config.REDIS_URL)
    throw new UsageError(
      `${what} needs REDIS_URL (e.g. redis://127.0.0.1:6379). Without Redis, \`proofline ingest\` and \`npm start\` run jobs in process.`,
    );
  const client = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  client.on('error', (e: Error) => {
    lastError = e; // the socket's own error (ECONNREFUSED …); connect() rejects with a generic one
  });
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    throw new Error(`Redis unreachable at ${redactRedisUrl(config.REDIS_URL)}: ${(lastError ?? (e as Error)).message || 'no answer'}`);
  } finally {
    client.disconnect();
  }
  return config.REDIS_URL;
}

/** A whole number ≥ `min` from a flag's text, or a usage error naming the flag. */
export function parseWholeNumber(value: string, flag: string, min = 0): number {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`${flag} must be a whole number ≥ ${min}, got ${value}`);
  return Number(value);
}
