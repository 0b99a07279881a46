import type { z, ZodType } from 'zod';
import type { Family } from './families';
import { bareError, envelopeError } from './families';

/** One documented response of a route; `schema` describes the JSON body (the `data` of an envelope). */
export interface ResponseDoc {
  description: string;
  schema?: ZodType;
  /** The body's media type when it is not JSON (a download); such bodies are documented as they are, never wrapped. */
  mediaType?: string;
}

/**
 * A route's responses by status. `default` documents statuses the route cannot list, such as
 * the reply of a webhook's Response node, whose status the workflow chooses.
 */
export type RouteResponses = { [status: number]: ResponseDoc } & { default?: ResponseDoc };

export interface ContractViolation {
  message: string;
  issues: Array<{ path: string; message: string }>;
}

export const CONTRACT_VIOLATION_CODE = 'response_contract_violation';

/**
 * Checks a handler's answer against the schema its route declares for that status (for the
 * envelope family: the `data` inside the envelope). The body is compared as the client will
 * read it, after JSON serialisation (dates become strings, undefined fields disappear).
 * Strings, buffers and streams are not JSON bodies (CSV exports, text replies) and are not
 * checked. Returns null when the answer keeps the contract.
 */
export function checkResponseContract(
  route: { operationId: string; responses: RouteResponses },
  status: number,
  body: unknown,
): ContractViolation | null {
  if (!isJsonBody(body)) return null;
  const doc = route.responses[status] ?? route.responses.default;
  if (!doc) return { message: `${route.operationId} answered ${status}, a status it does not declare`, issues: [] };
  if (!doc.schema) return { message: `${route.operationId} declares no schema for its ${status} body`, issues: [] };
  const parsed = doc.schema.safeParse(JSON.parse(JSON.stringify(body)));
  if (parsed.success) return null;
  return {
    message: `${route.operationId} answered ${status} with a body that does not match its declared schema`,
    issues: flattenIssues(parsed.error.issues, []),
  };
}

/**
 * Zod reports a failed union as one `Invalid input` at the union's path; the issues of each
 * alternative are what say why, so they are listed instead, tagged with the alternative.
 */
function flattenIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[], alternative = ''): ContractViolation['issues'] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      return issue.errors.flatMap((branch, i) => flattenIssues(branch, path, `${alternative}[alternative ${i + 1}] `));
    }
    return [{ path: path.map(String).join('.'), message: `${alternative}${issue.message}` }];
  });
}

/** The 500 that replaces a response breaking its contract, in the route's family. */
export function contractViolationBody(family: Family, violation: ContractViolation): unknown {
  if (family === 'envelope') {
    const details = violation.issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ');
    return envelopeError('internal_error', details ? `${violation.message}: ${details}` : violation.message);
  }
  return bareError(violation.message, CONTRACT_VIOLATION_CODE, { issues: violation.issues });
}

function isJsonBody(body: unknown): boolean {
  if (body === undefined || body === null) return false;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return false;
  // Streams (pipe) are sent as they are.
  return typeof (body as { pipe?: unknown }).pipe !== 'function';
}
