import { z } from 'zod';
import { API_KEY_SCOPES, LOG_LEVELS, RUN_STATUSES, RUN_TRIGGERS } from '../../engine/statuses';
import { RUN_SORTS } from '../../services/runs/queries';

/**
 * Response and shared schemas reused across areas; request schemas live beside their routes,
 * and each area's response schemas live in a module of its own beside this one
 * (`schemas/runs.ts`, `schemas/workflows.ts`, …).
 *
 * Response objects are strict (`additionalProperties: false`) unless their content is
 * genuinely open (run input and output, node configs): with VALIDATE_RESPONSES on, a field a
 * handler adds without declaring it fails the response, so the document cannot fall behind.
 */
export const bareErrorSchema = z.object({ error: z.string(), code: z.string().optional() }).passthrough();
export const envelopeErrorSchema = z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) });

export const isoDate = z.string().describe('ISO-8601 timestamp');

/** The creation and last-change times of a resource, spread into its schema where they stand. */
export const timestampFields = { createdAt: isoDate, updatedAt: isoDate };

/**
 * Every id or token in a path: printable ASCII without spaces, bounded, so malformed ids (NUL
 * bytes, control characters, megabyte strings) are a 400 before any query runs.
 */
export const pathId = z
  .string()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces or control characters');

/** The path parameters of a route under one resource: its `{id}`. */
export const idParams = z.object({ id: pathId });

/** The bounds of one numeric option of a body (`{ min, max, default }`, declared by its service). */
export interface OptionBounds {
  min: number;
  max: number;
  default: number;
}

/** A whole number within `bounds`, its messages naming the option: `maxPages must be at most 50`. */
export const boundedInt = (bounds: Pick<OptionBounds, 'min' | 'max'>, what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .int(`${what} must be an integer`)
    .min(bounds.min, `${what} must be at least ${bounds.min}`)
    .max(bounds.max, `${what} must be at most ${bounds.max}`);

/**
 * A strict object of whole-number options, one per key of a service's bounds table (unknown keys
 * refused): an absent option takes its default (`'default'`) or stays absent (`'optional'`).
 */
export function boundedOptions<K extends string>(
  bounds: Record<K, OptionBounds>,
  absent: 'default',
): z.ZodObject<Record<K, z.ZodDefault<z.ZodNumber>>, z.core.$strict>;
export function boundedOptions<K extends string>(
  bounds: Record<K, OptionBounds>,
  absent: 'optional',
): z.ZodObject<Record<K, z.ZodOptional<z.ZodNumber>>, z.core.$strict>;
export function boundedOptions(bounds: Record<string, OptionBounds>, absent: 'default' | 'optional') {
  const shape = Object.fromEntries(
    Object.entries(bounds).map(([key, b]) => [
      key,
      absent === 'default' ? boundedInt(b, key).default(b.default) : boundedInt(b, key).optional(),
    ]),
  );
  return z.strictObject(shape);
}

/** Dates of the list filters: ISO-8601 dates PostgreSQL can compare, years 1970 to 9999. */
export const filterDate = z
  .string()
  .refine((s) => s === '' || s === 'all' || isFilterDate(s), 'must be an ISO-8601 date or timestamp between 1970 and 9999');

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const MIN_FILTER_MS = Date.UTC(1970, 0, 1);
const MAX_FILTER_MS = Date.UTC(10000, 0, 1);
function isFilterDate(s: string): boolean {
  if (!ISO_DATE.test(s)) return false;
  const ms = Date.parse(s);
  return Number.isFinite(ms) && ms >= MIN_FILTER_MS && ms < MAX_FILTER_MS;
}
export const url = z.string().describe('Absolute URL');

export const workspaceSchema = z.strictObject({ id: z.string(), name: z.string(), createdAt: isoDate, updatedAt: isoDate });

export const redactionSchema = z
  .strictObject({
    applied: z.literal(true),
    projection: z.literal('safe-content'),
    contractVersion: z.literal('workspace-safe.v1'),
    restrictedFields: z.array(z.string()),
  })
  .describe('Present on `workspace-safe.v1` projections: the restricted fields are omitted, not empty');

export const userSchema = z.strictObject({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  status: z.enum(['active', 'invited', 'banned']),
  createdAt: isoDate,
});

export const roleSchema = z.enum(['owner', 'admin', 'member', 'viewer']);

export const apiKeySchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  scope: z.enum(API_KEY_SCOPES),
  workspaceId: z.string().nullable(),
  tokenPrefix: z.string(),
  createdById: z.string(),
  createdAt: isoDate,
  lastUsedAt: isoDate.nullable(),
  organization: z
    .strictObject({
      workspaceSelection: z.enum(['organization', 'selected']),
      workspaceIds: z.array(z.string()),
      permission: z.enum(['read', 'write']),
      organizationId: z.string().optional(),
    })
    .optional(),
  allowedWorkflowIds: z.array(z.string()).optional(),
});

export const runStatusSchema = z.enum(RUN_STATUSES);
export const runTriggerSchema = z.enum(RUN_TRIGGERS);
export const logLevelSchema = z.enum(LOG_LEVELS);

/** Standard error responses of an API-key route in the bare family. */
export const bareAuthErrors = {
  400: { description: 'Invalid request', schema: bareErrorSchema },
  401: { description: 'Valid bearer API key is required', schema: bareErrorSchema },
  403: { description: 'Wrong key scope or role', schema: bareErrorSchema },
};

/** Error responses of a session route for Admins and Owners. */
export const sessionAdminErrors = {
  401: { description: 'Sign-in is required', schema: bareErrorSchema },
  403: { description: 'Admin or Owner role required, or cross-origin', schema: bareErrorSchema },
};

/** `limit` of a cursor-paged list: 1 to 100, 50 when absent. */
export const pageLimit = z.coerce.number().int().min(1).max(100).default(50);

/** The query of a list paged by an opaque cursor (the previous page's `nextCursor`, at most 500 characters). */
export const cursorPageQuery = z.object({ limit: pageLimit, cursor: z.string().max(500).optional() });

/** The paging keys of a list whose cursor is the last id of the previous page (never empty, at most 200 characters). */
export const idCursorPage = { cursor: z.string().min(1).max(200).optional(), limit: pageLimit };

/**
 * Query filters shared by the runs list and the logs routes. Empty or `all` means no filter;
 * `limit` stays a string because each route clamps it with its own bounds.
 */
export const runFiltersQuery = z.object({
  status: z.enum(['all', '', ...RUN_STATUSES]).optional(),
  trigger: z.enum(['all', '', ...RUN_TRIGGERS]).optional(),
  workflowId: z.string().optional(),
  level: z.enum(['all', '', ...LOG_LEVELS]).optional(),
  dateFrom: filterDate.optional(),
  dateTo: filterDate.optional(),
  query: z.string().max(500).optional(),
  sort: z.enum(RUN_SORTS).optional(),
  limit: z.string().optional(),
});
