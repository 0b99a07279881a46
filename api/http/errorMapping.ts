import type { ErrorKind } from '../../services/kernel/errors';

/** The one place a domain error kind becomes an HTTP status. */
export const STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  locked: 423,
  unavailable: 503,
  timeout: 408,
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  precondition_failed: 412,
  internal: 500,
};

/**
 * An error raised by the HTTP edge itself (unmatched routes, wrong methods), which has no
 * domain meaning. Services never throw it.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Headers the answer carries (e.g. `Content-Range` on a 416). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}
