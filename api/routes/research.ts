import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route';
import { REPLAYED_HEADER } from '../middleware/idempotency';
import { envelopeErrorSchema, pathId } from '../schemas';
import { researchAuthErrors, researchCreatedSchema, researchRunEnvelope, researchRunListSchema } from '../schemas/research';
import { parseIdempotencyKey } from '../../services/kernel/idempotency';
import {
  cancelResearchRun,
  createResearchRun,
  getResearchRun,
  listResearchRuns,
  MAX_SOURCE_URLS,
  normalizeResearchUrl,
  RESEARCH_LIMIT_BOUNDS,
  RESEARCH_LIST_LIMIT,
} from '../../services/research';

/**
 * Research runs, in the envelope family. There are no routes for web search, read or crawl: a
 * run fetches its sources itself, on Temporal. POST handles its Idempotency-Key itself: the key
 * names the run (`research_…`), and a replay answers the run as it is now (`deduplicated`).
 */

const read = { kind: 'apiKey', scopes: 'workspace', roles: 'read' } as const;
const write = { kind: 'apiKey', scopes: 'workspace', roles: 'write' } as const;
const tags = ['Research'];

const bounded = (b: { min: number; max: number }, what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .int(`${what} must be an integer`)
    .min(b.min, `${what} must be at least ${b.min}`)
    .max(b.max, `${what} must be at most ${b.max}`);
const limits = z.strictObject({
  maxPages: bounded(RESEARCH_LIMIT_BOUNDS.maxPages, 'maxPages').optional(),
  maxDomains: bounded(RESEARCH_LIMIT_BOUNDS.maxDomains, 'maxDomains').optional(),
  maxBytes: bounded(RESEARCH_LIMIT_BOUNDS.maxBytes, 'maxBytes').optional(),
  timeoutMs: bounded(RESEARCH_LIMIT_BOUNDS.timeoutMs, 'timeoutMs').optional(),
});
const sourceUrl = z
  .string({ error: 'each source URL must be a string' })
  .max(2048, 'a source URL must be at most 2048 characters')
  .refine((u) => normalizeResearchUrl(u) !== null, 'a source URL must be an absolute http or https URL without credentials')
  .transform((u) => normalizeResearchUrl(u)!);
const createBody = z.strictObject({
  query: z
    .string({ error: 'query must be a string' })
    .trim()
    .min(1, 'query must not be empty')
    .max(2000, 'query must be at most 2000 characters'),
  sourceUrls: z
    .array(sourceUrl, { error: 'sourceUrls must be an array of URLs' })
    .min(1, 'sourceUrls must name at least one URL (there is no web search)')
    .max(MAX_SOURCE_URLS, `sourceUrls must name at most ${MAX_SOURCE_URLS} URLs`)
    .transform((urls) => [...new Set(urls)]),
  limits: limits.optional(),
  // Our extension: a connected local AI CLI synthesizes the answer (jobs take the same fields).
  aiProvider: z.enum(['cliA', 'cliB'], { error: 'aiProvider must be cliA or cliB' }).optional(),
  aiModel: z
    .string({ error: 'aiModel must be a string' })
    .trim()
    .min(1, 'aiModel must not be empty')
    .max(200, 'aiModel must be at most 200 characters')
    .optional(),
});
const listQuery = z.object({
  // Checked by the service, so an unknown status is `validation_failed` (bad research input) and a bad limit `request_malformed`.
  status: z.string().max(50).optional(),
  cursor: z.string().min(1).max(500).optional(),
  limit: z.coerce.number().int().min(RESEARCH_LIST_LIMIT.min).max(RESEARCH_LIST_LIMIT.max).default(RESEARCH_LIST_LIMIT.default),
});
const idParams = z.object({ id: pathId });

const notFound = { 404: { description: '`resource_not_found`: no such research run in this workspace', schema: envelopeErrorSchema } };
const badRequest = (what: string) => ({ 400: { description: what, schema: envelopeErrorSchema } });

export const researchRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/research',
    operationId: 'listResearchRuns',
    summary: 'Research runs of the workspace, newest first (createdAt desc, id desc), optionally of one status',
    tags,
    family: 'envelope',
    access: read,
    query: listQuery,
    responses: {
      200: { description: '`{ runs, nextCursor }`', schema: researchRunListSchema },
      ...badRequest('`request_malformed`: limit outside 1 to 100; `validation_failed`: unknown status or invalid cursor'),
      ...researchAuthErrors,
    },
    handler: async (ctx, { principal, query }) => ({ status: 200, body: await listResearchRuns(ctx.state.em, principal, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/research',
    operationId: 'createResearchRun',
    summary:
      'Queue a research run and start it on Temporal (Idempotency-Key required; it names the run). A replay answers 200 with the run as it is now',
    tags,
    family: 'envelope',
    access: write,
    body: createBody,
    responses: {
      202: {
        description: '`{ run, deduplicated: false, dispatch: { dispatched: true, queued: true, mode: "temporal" } }`',
        schema: researchCreatedSchema,
      },
      200: {
        description: 'Replay (Idempotency-Replayed: true): `{ run, deduplicated: true, dispatch: { dispatched: false } }`',
        schema: researchCreatedSchema,
      },
      ...badRequest('`validation_failed`: bad query, sourceUrls or limits; `idempotency_key_invalid`'),
      ...researchAuthErrors,
      409: { description: '`conflict`: the key was used for a run with another request', schema: envelopeErrorSchema },
    },
    handler: async (ctx, { principal, body, deps }) => {
      const key = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, true)!;
      const { run, deduplicated } = await createResearchRun(ctx.state.em, deps.services.research.launcher, principal, key, {
        query: body.query,
        sourceUrls: body.sourceUrls,
        limits: body.limits ?? {},
        ...(body.aiProvider ? { aiProvider: body.aiProvider } : {}),
        ...(body.aiModel ? { aiModel: body.aiModel } : {}),
      });
      if (deduplicated)
        return { status: 200, body: { run, deduplicated: true, dispatch: { dispatched: false } }, headers: { [REPLAYED_HEADER]: 'true' } };
      return { status: 202, body: { run, deduplicated: false, dispatch: { dispatched: true, queued: true, mode: 'temporal' } } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/research/{id}',
    operationId: 'getResearchRun',
    summary: 'One research run with its stored source snapshots',
    tags,
    family: 'envelope',
    access: read,
    params: idParams,
    responses: { 200: { description: '`{ run }`', schema: researchRunEnvelope }, ...researchAuthErrors, ...notFound },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: { run: await getResearchRun(ctx.state.em, principal, params.id) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/research/{id}/cancel',
    operationId: 'cancelResearchRun',
    summary: 'Cancel a queued or running research run (its execution stops at its next step); a terminal run is returned as it is',
    tags,
    family: 'envelope',
    access: write,
    params: idParams,
    idempotency: 'required',
    responses: {
      200: { description: '`{ run }`', schema: researchRunEnvelope },
      ...badRequest('`idempotency_key_invalid`'),
      ...researchAuthErrors,
      ...notFound,
      409: { description: '`idempotency_replay_mismatch`: the key was used with another request', schema: envelopeErrorSchema },
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 200,
      body: { run: await cancelResearchRun(ctx.state.em, deps.services.research.launcher, principal, params.id) },
    }),
  }),
];
