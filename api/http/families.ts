/**
 * The two response families of the spec. Every body an area writes goes through these
 * helpers, so the shapes exist in exactly one place.
 */
export type Family = 'bare' | 'envelope';

export const CONTRACT_VERSION = 'api-contracts.v1';

export function envelopeOk<T>(data: T): { ok: true; data: T; meta: { contractVersion: typeof CONTRACT_VERSION } } {
  return { ok: true, data, meta: { contractVersion: CONTRACT_VERSION } };
}

export function envelopeError(
  code: string,
  message: string,
  extra?: Record<string, unknown>,
): { ok: false; error: { code: string; message: string } } {
  return { ok: false, error: { ...(extra ?? {}), code, message } };
}

/** Bare failure body: `{ error, code? }` plus the route's contextual fields. */
export function bareError(message: string, code?: string, details?: Record<string, unknown>): Record<string, unknown> {
  return { ...(details ?? {}), error: message, ...(code ? { code } : {}) };
}

/** The envelope code for a status when the error names none (spec's envelope error table). */
export function defaultEnvelopeCode(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 416:
      return 'validation_failed';
    case 401:
      return 'authentication_required';
    case 403:
      return 'authorization_failed';
    case 404:
      return 'resource_not_found';
    case 409:
    case 423:
      return 'conflict';
    case 503:
      return 'service_unavailable';
    default:
      return status >= 500 ? 'internal_error' : 'request_malformed';
  }
}
