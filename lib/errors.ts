/**
 * The one error tree of the pipeline and service. Every failure is one of four
 * kinds, each with exactly one mapping to a job outcome, an HTTP status and a
 * JSON-RPC code:
 *
 * | error                  | job                       | HTTP | JSON-RPC |
 * |------------------------|---------------------------|------|----------|
 * | SourceUnavailableError | transient: retried        | 503  | -32603   |
 * | ParseError             | terminal (no retry)       | 422  | -32603   |
 * | NotFoundError          | terminal                  | 404  | -32602 (tool error) |
 * | InvalidInputError      | terminal                  | 400  | -32602   |
 *
 * Anything else is unexpected: jobs retry it, HTTP answers 500 with the text
 * hidden, JSON-RPC answers -32603. Pure functions throw these, never return
 * partial results.
 */

export type ErrorContext = Record<string, unknown>;

export class PipelineError extends Error {
  readonly code: string = 'proofline:error';
  readonly context: ErrorContext;
  constructor(message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = this.constructor.name;
    this.context = context;
  }
}

/** A source could not be reached or answered with a temporary failure (timeout, 5xx, 429, SEC 403 rate page). Transient. */
export class SourceUnavailableError extends PipelineError {
  override readonly code = 'proofline:source-unavailable';
  /** Milliseconds the caller should wait before trying again, when the source said so. */
  readonly retryAfterMs: number | null;
  constructor(message: string, context: ErrorContext & { retryAfterMs?: number } = {}, options?: { cause?: unknown }) {
    super(message, context, options);
    this.retryAfterMs = context.retryAfterMs ?? null;
  }
}

/** Bytes arrived but the promised object could not be built from them. Context names file and position. Terminal. */
export class ParseError extends PipelineError {
  override readonly code = 'proofline:parse';
  constructor(message: string, context: ErrorContext & { file?: string; line?: number; position?: number; sha256?: string } = {}, options?: { cause?: unknown }) {
    super(message, context, options);
  }
}

/** The thing asked for does not exist. */
export class NotFoundError extends PipelineError {
  override readonly code = 'proofline:not-found';
}

/** A query, parameter, body or job payload is invalid. */
export class InvalidInputError extends PipelineError {
  override readonly code = 'proofline:invalid-input';
}

export type ErrorKind = 'transient' | 'parse' | 'not_found' | 'invalid_input' | 'unexpected';

/** Classifies any thrown value into one of the five kinds. */
export function classifyError(err: unknown): ErrorKind {
  if (err instanceof SourceUnavailableError) return 'transient';
  if (err instanceof ParseError) return 'parse';
  if (err instanceof NotFoundError) return 'not_found';
  if (err instanceof InvalidInputError) return 'invalid_input';
  return 'unexpected';
}

/** True when a job failing with `err` should not be retried. */
export function isTerminal(err: unknown): boolean {
  const k = classifyError(err);
  return k === 'parse' || k === 'not_found' || k === 'invalid_input';
}

/** HTTP status for an error kind (the single mapping used by the service). */
export function httpStatusFor(err: unknown): number {
  switch (classifyError(err)) {
    case 'transient': return 503;
    case 'parse': return 422;
    case 'not_found': return 404;
    case 'invalid_input': return 400;
    default: return 500;
  }
}

/** JSON-RPC error code for an error kind (the single mapping used by /mcp). */
export function rpcCodeFor(err: unknown): number {
  switch (classifyError(err)) {
    case 'invalid_input':
    case 'not_found':
      return -32602;
    default:
      return -32603;
  }
}

/** A message safe to show a client: the error's own text for our kinds, a generic one for unexpected errors. */
export function publicMessage(err: unknown): string {
  return classifyError(err) === 'unexpected' ? 'internal error' : (err as Error).message;
}
