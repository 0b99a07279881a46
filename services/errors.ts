/**
 * Typed errors thrown by services and middleware. One middleware (api/middleware/errors.ts)
 * turns them into the legacy `{ error, code? }` or the envelope `{ ok: false, error }` body,
 * depending on the family of the route that failed.
 */
export class ApiError extends Error {
  /** Code shown in both families when set; the envelope falls back to a code derived from the status. */
  readonly code: string | undefined;
  /** Extra fields added next to `error` in the legacy family (the spec's "contextual fields"). */
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    readonly status: number,
    message: string,
    opts: { code?: string; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = opts.code;
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

type Opts = ConstructorParameters<typeof ApiError>[2];

export const badRequest = (message: string, opts?: Opts) => new ApiError(400, message, opts);
export const unauthorized = (message: string, opts?: Opts) => new ApiError(401, message, opts);
export const forbidden = (message: string, opts?: Opts) => new ApiError(403, message, opts);
export const notFound = (message: string, opts?: Opts) => new ApiError(404, message, opts);
export const conflict = (message: string, opts?: Opts) => new ApiError(409, message, opts);
export const tooManyRequests = (message: string, opts?: Opts) => new ApiError(429, message, opts);
export const serviceUnavailable = (message: string, opts?: Opts) => new ApiError(503, message, opts);

/** The spec's exact authentication and scope messages, shared by every area. */
export const AUTH_MESSAGES = {
  bearerRequired: 'Valid bearer API key is required',
  workspaceKeyRequired: 'A workspace API key is required.',
  adminRequired: 'Admin or Owner role required.',
  writeRequired: 'Write permission is required.',
  sessionRequired: 'Sign-in is required.',
  crossOrigin: 'Cross-origin request refused.',
} as const;
