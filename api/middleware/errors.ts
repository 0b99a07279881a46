import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { ZodError } from 'zod';
import type { Next } from 'koa';
import type { AppContext } from '../context';
import { DomainError } from '../../services/kernel/errors';
import { HttpError, STATUS_OF_KIND } from '../http/errorMapping';
import { defaultEnvelopeCode, envelopeError, bareError } from '../http/families';
import { describeZodError } from '../http/validation';

/**
 * The one error middleware, mounted first. Domain errors get the status of their kind; body-parser
 * errors (malformed JSON 400, too large 413, unsupported type 415) keep theirs; zod errors
 * are 400; anything else is a logged 500 with an opaque message. Never a stack trace.
 */
export async function errorMiddleware(ctx: AppContext, next: Next): Promise<void> {
  try {
    await next();
    // Unmatched routes (404) and the router's 405/501 arrive without a body: give them one.
    if (ctx.body === undefined || ctx.body === null) {
      if (ctx.status === 404) throw new HttpError(404, 'Not found');
      if (ctx.status === 405) throw new HttpError(405, 'Method not allowed');
      if (ctx.status === 501) throw new HttpError(501, 'Not implemented');
    }
  } catch (err) {
    const { status, message, code, details, headers, envelope } = classify(err);
    if (status >= 500) ctx.state.log?.error({ err }, 'request failed');
    ctx.status = status;
    if (headers) ctx.set(headers);
    ctx.body =
      ctx.state.family === 'envelope'
        ? envelopeError(code ?? defaultEnvelopeCode(status), message, envelope)
        : bareError(message, code, details);
  }
}

interface Classified {
  status: number;
  message: string;
  code?: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
  envelope?: Record<string, unknown>;
}

function classify(err: unknown): Classified {
  if (err instanceof DomainError) {
    const headers = err.retryAfterSeconds !== undefined ? { 'Retry-After': String(err.retryAfterSeconds) } : undefined;
    return {
      status: STATUS_OF_KIND[err.kind],
      message: err.message,
      code: err.code,
      details: err.details,
      headers,
      envelope: err.envelope,
    };
  }
  if (err instanceof HttpError) return { status: err.status, message: err.message, headers: err.headers };
  if (err instanceof ZodError) return { status: 400, message: describeZodError(err) };
  if (err instanceof UniqueConstraintViolationException) {
    return { status: 409, message: 'A concurrent request changed the same resource; retry the request.' };
  }
  const httpish = err as {
    status?: number;
    statusCode?: number;
    expose?: boolean;
    message?: string;
    type?: string;
    headers?: Record<string, string>;
  };
  const status = httpish.status ?? httpish.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // http-errors carry headers such as Allow on a 405.
    return { status, message: clientErrorMessage(status, httpish), headers: httpish.headers };
  }
  return { status: 500, message: 'Internal server error' };
}

/** Readable messages for errors raised by the body parser and Koa itself. */
function clientErrorMessage(status: number, err: { type?: string; expose?: boolean; message?: string }): string {
  if (status === 413) return 'Request body is too large.';
  if (status === 415) return 'Unsupported content type.';
  if (err.type === 'entity.parse.failed' || (status === 400 && /JSON/i.test(err.message ?? ''))) {
    return 'Request body is not valid JSON.';
  }
  return err.expose && err.message ? err.message : 'Bad request';
}
