/**
 * Typed domain errors thrown by services. They say what went wrong in domain terms (`kind`),
 * never how to answer it: the one HTTP error mapper (api/http/errorMapping.ts) turns a kind
 * into a status and writes the bare `{ error, code? }` or the envelope `{ ok: false, error }`
 * body, depending on the family of the route that failed.
 */
export type ErrorKind =
  /** The request is malformed or breaks a rule of the resource. */
  | 'invalid'
  /** No valid credentials. */
  | 'unauthenticated'
  /** Credentials are valid but do not allow this. */
  | 'forbidden'
  | 'not_found'
  /** The resource's current state refuses the change (stale version, already decided, duplicate). */
  | 'conflict'
  | 'rate_limited'
  /** The resource exists but its state does not allow this yet (a file not ready for download). */
  | 'locked'
  /** A dependency (the durable engine, a secret, an outside service) cannot serve the request now. */
  | 'unavailable'
  /** The work ran out of its time budget (a slow SQL query). */
  | 'timeout'
  /** The input is over a size limit (a CSV import over 5 MB). */
  | 'too_large'
  /** The input is of a type the operation does not take (a non-CSV upload). */
  | 'unsupported_media_type'
  /** The input is well-formed as a request but its content cannot be processed (malformed CSV). */
  | 'unprocessable'
  /** A precondition of the request no longer holds (an expired proposal). */
  | 'precondition_failed'
  /** An unclassified failure whose message is still worth showing (a sync run that failed at its provider). */
  | 'internal';

export interface DomainErrorOptions {
  /** Machine-readable code shown in both families; the envelope falls back to one derived from the kind. */
  code?: string;
  /** Contextual fields added next to `error` in the bare family (the spec's "contextual fields"). */
  details?: Record<string, unknown>;
  /** For `rate_limited`: when the caller may try again. */
  retryAfterSeconds?: number;
  /** Fields added to the envelope family's `error` object next to code and message (e.g. `retryable`, `details`). */
  envelope?: Record<string, unknown>;
}

/**
 * An internal failure that callers tell apart by `reason` (a blob of the wrong size, a sealed
 * value that does not open, a credential that cannot be used); its subclasses name the reasons.
 */
export class ReasonedError<Reason extends string> extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class DomainError extends Error {
  readonly code: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly envelope: Record<string, unknown> | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    opts: DomainErrorOptions = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.code = opts.code;
    this.details = opts.details;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.envelope = opts.envelope;
  }
}

export const invalidInput = (message: string, opts?: DomainErrorOptions) => new DomainError('invalid', message, opts);
export const unauthenticated = (message: string, opts?: DomainErrorOptions) => new DomainError('unauthenticated', message, opts);
export const forbidden = (message: string, opts?: DomainErrorOptions) => new DomainError('forbidden', message, opts);
export const notFound = (message: string, opts?: DomainErrorOptions) => new DomainError('not_found', message, opts);
export const conflict = (message: string, opts?: DomainErrorOptions) => new DomainError('conflict', message, opts);
export const rateLimited = (message: string, opts?: DomainErrorOptions) => new DomainError('rate_limited', message, opts);
export const locked = (message: string, opts?: DomainErrorOptions) => new DomainError('locked', message, opts);
export const unavailable = (message: string, opts?: DomainErrorOptions) => new DomainError('unavailable', message, opts);
export const timedOut = (message: string, opts?: DomainErrorOptions) => new DomainError('timeout', message, opts);
export const tooLarge = (message: string, opts?: DomainErrorOptions) => new DomainError('too_large', message, opts);
export const unsupportedMediaType = (message: string, opts?: DomainErrorOptions) =>
  new DomainError('unsupported_media_type', message, opts);
export const unprocessable = (message: string, opts?: DomainErrorOptions) => new DomainError('unprocessable', message, opts);
export const preconditionFailed = (message: string, opts?: DomainErrorOptions) => new DomainError('precondition_failed', message, opts);
export const internalFailure = (message: string, opts?: DomainErrorOptions) => new DomainError('internal', message, opts);

/** The spec's exact authentication and scope messages, shared by every area. */
export const AUTH_MESSAGES = {
  bearerRequired: 'Valid bearer API key is required',
  workspaceKeyRequired: 'A workspace API key is required.',
  gatewayKeyRequired: 'An end-user gateway API key is required.',
  endUsersDisabled: 'End-user gateway keys are not enabled on this deployment.',
  adminRequired: 'Admin or Owner role required.',
  writeRequired: 'Write permission is required.',
  sessionRequired: 'Sign-in is required.',
  crossOrigin: 'Cross-origin request refused.',
} as const;
