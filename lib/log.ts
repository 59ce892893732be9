/** Structured logging (pino). Child loggers carry `run_id` and `job_id` on every line. */
import { pino, type Logger } from 'pino';

export type { Logger };

/** A JSON logger writing to stderr, so stdout stays free for CLI output. */
export function createLogger(level: string = 'info', bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { service: 'proofline', ...bindings } }, pino.destination({ fd: 2, sync: false }));
}

/** A logger that discards everything (tests). */
export const silentLogger: Logger = pino({ level: 'silent' });
