/**
 * The one error tree of the pipeline and service. Every class carries its own
 * HTTP status, JSON-RPC code and job outcome, so each transport has exactly one
 * mapping (`errorResponse` for HTTP in service/platform/http.ts, `toolErrorOf`
 * for MCP, `isTerminal` for jobs) and no route keeps its own switch:
 *
 * | error                  | kind             | job                 | HTTP | JSON-RPC |
 * |------------------------|------------------|---------------------|------|----------|
 * | SourceUnavailableError | transient        | retried             | 503  | -32603   |
 * | ParseError             | parse            | terminal (no retry) | 422  | -32603   |
 * | NotFoundError          | not_found        | terminal            | 404  | -32602 (tool error) |
 * | InvalidInputError      | invalid_input    | terminal            | 400  | -32602   |
 * | PayloadTooLargeError   | invalid_input    | terminal            | 413  | -32602   |
 * | RateLimitedError       | rate_limited     | retried             | 429  | -32004   |
 * | InvalidApiKeyError     | unauthorized     | terminal            | 401  | -32001   |
 * | PaymentRequiredError   | payment_required | terminal            | 402  | -32002   |
 * | ConflictError          | conflict         | terminal            | 409  | -32003   |
 * | ConfigError            | config           | terminal            | 500  | -32603   |
 *
 * Subclasses keep their parent's mapping (StageOrderError is a conflict,
 * DiscoveryFetchError is transient or invalid input by its code, RunFailedError
 * is a transient failure of a whole run). Anything else is unexpected: jobs
 * retry it, HTTP answers 500 with the text hidden, JSON-RPC answers -32603.
 * Pure functions throw these, never return partial results.
 */

export type ErrorContext = Record<string, unknown>;

export type ErrorKind =
  | 'transient'
  | 'parse'
  | 'not_found'
  | 'invalid_input'
  | 'unauthorized'
  | 'payment_required'
  | 'conflict'
  | 'rate_limited'
  | 'config'
  | 'unexpected';

export class PipelineError extends Error {
  readonly code: string = 'proofline:error';
  /** The kind this error maps by (one row of the table above). */
  readonly kind: ErrorKind = 'unexpected';
  /** HTTP status of the answer (service/platform/http.ts). */
  readonly httpStatus: number = 500;
  /** JSON-RPC error code (MCP). */
  readonly rpcCode: number = -32603;
  /** False when a job failing with this error must not be retried. */
  readonly retryable: boolean = true;
  readonly context: ErrorContext;
  constructor(message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = this.constructor.name;
    this.context = context;
  }
}

/** A source could not be reached or answered with a temporary failure (timeout, 5xx, 429, SEC 403 rate page). Transient. */
export class SourceUnavailableError extends PipelineError {
  override readonly code: string = 'proofline:source-unavailable';
  override readonly kind: ErrorKind = 'transient';
  override readonly httpStatus: number = 503;
  /** Milliseconds the caller should wait before trying again, when the source said so. */
  readonly retryAfterMs: number | null;
  constructor(message: string, context: ErrorContext & { retryAfterMs?: number } = {}, options?: { cause?: unknown }) {
    super(message, context, options);
    this.retryAfterMs = context.retryAfterMs ?? null;
  }
}

/** Bytes arrived but the promised object could not be built from them. Context names file and position. Terminal. */
export class ParseError extends PipelineError {
  override readonly code: string = 'proofline:parse';
  override readonly kind: ErrorKind = 'parse';
  override readonly httpStatus: number = 422;
  override readonly retryable: boolean = false;
  constructor(
    message: string,
    context: ErrorContext & { file?: string; line?: number; position?: number; sha256?: string } = {},
    options?: { cause?: unknown },
  ) {
    super(message, context, options);
  }
}

/** The thing asked for does not exist. */
export class NotFoundError extends PipelineError {
  override readonly code: string = 'proofline:not-found';
  override readonly kind: ErrorKind = 'not_found';
  override readonly httpStatus: number = 404;
  override readonly rpcCode: number = -32602;
  override readonly retryable: boolean = false;
}

/** A query, parameter, body or job payload is invalid. */
export class InvalidInputError extends PipelineError {
  override readonly code: string = 'proofline:invalid-input';
  override readonly kind: ErrorKind = 'invalid_input';
  override readonly httpStatus: number = 400;
  override readonly rpcCode: number = -32602;
  override readonly retryable: boolean = false;
}

/** A request body over its route's limit (HTTP 413; the limit is named in the message and `context.response`). */
export class PayloadTooLargeError extends InvalidInputError {
  override readonly code: string = 'proofline:payload-too-large';
  override readonly httpStatus: number = 413;
}

/** A client over its hourly limit on a door that is not answered by the /api layer itself (/ai/query, /mcp): HTTP 429. */
export class RateLimitedError extends PipelineError {
  override readonly code: string = 'proofline:rate-limited';
  override readonly kind: ErrorKind = 'rate_limited';
  override readonly httpStatus: number = 429;
  override readonly rpcCode: number = -32004;
  override readonly retryable: boolean = true;
}

/** An API key that is unknown or revoked (never silently downgraded to the free tier). */
export class InvalidApiKeyError extends PipelineError {
  override readonly code: string = 'proofline:invalid-api-key';
  override readonly kind: ErrorKind = 'unauthorized';
  override readonly httpStatus: number = 401;
  override readonly rpcCode: number = -32001;
  override readonly retryable: boolean = false;
}

/** The balance does not cover a paid operation: HTTP 402 with the numbers a client needs in `context.response`. */
export class PaymentRequiredError extends PipelineError {
  override readonly code: string = 'proofline:payment-required';
  override readonly kind: ErrorKind = 'payment_required';
  override readonly httpStatus: number = 402;
  override readonly rpcCode: number = -32002;
  override readonly retryable: boolean = false;
}

/** The request conflicts with the current state (HTTP 409). */
export class ConflictError extends PipelineError {
  override readonly code: string = 'proofline:conflict';
  override readonly kind: ErrorKind = 'conflict';
  override readonly httpStatus: number = 409;
  override readonly rpcCode: number = -32003;
  override readonly retryable: boolean = false;
}

/** A custody append that breaks the stage order rules (service/care). */
export class StageOrderError extends ConflictError {
  override readonly code: string = 'proofline:stage-order';
}

/** The configuration (environment) is invalid; the message names every invalid variable. */
export class ConfigError extends PipelineError {
  override readonly code: string = 'proofline:config';
  override readonly kind: ErrorKind = 'config';
  override readonly retryable: boolean = false;
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`, { issues });
  }
}

/** Classifies any thrown value into one of the kinds of the table. */
export function classifyError(err: unknown): ErrorKind {
  return err instanceof PipelineError ? err.kind : 'unexpected';
}

/** True when a job failing with `err` should not be retried. */
export function isTerminal(err: unknown): boolean {
  return err instanceof PipelineError && !err.retryable;
}

/** HTTP status for any thrown value (the single mapping used by the service). */
export function httpStatusFor(err: unknown): number {
  return err instanceof PipelineError ? err.httpStatus : 500;
}

/** JSON-RPC error code for any thrown value (the single mapping used by /mcp). */
export function rpcCodeFor(err: unknown): number {
  return err instanceof PipelineError ? err.rpcCode : -32603;
}

/** A message safe to show a client: the error's own text for our kinds, a generic one for unexpected errors. */
export function publicMessage(err: unknown): string {
  return classifyError(err) === 'unexpected' ? 'internal error' : (err as Error).message;
}
