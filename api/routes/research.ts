import { z } from 'zod';
import { routeGroup, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { answerById } from '../http/handlers';
import { notFound, REPLAY_MISMATCH } from '../http/envelopeErrors';
import { REPLAYED_HEADER } from '../middleware/idempotency';
import { boundedOptions, idParams } from '../schemas';
import { researchCreatedSchema, researchRunEnvelope, researchRunListSchema } from '../schemas/research';
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
 * run fetches its sources itself, on Temporal (and searches the web for its query when it names
 * none and a provider is configured). POST handles its Idempotency-Key itself: the key
 * names the run (`research_…`), and a replay answers the run as it is now (`deduplicated`).
 */

const researchRoute = routeGroup({ tags: ['Research'], family: 'envelope', access: WORKSPACE_READ, pathPrefix: '/api/v1/research' });

const limits = boundedOptions(RESEARCH_LIMIT_BOUNDS, 'optional');
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
  // Optional: without it (or empty) the run searches the web for its query, when a provider is configured (checked by the service).
  sourceUrls: z
    .array(sourceUrl, { error: 'sourceUrls must be an array of URLs' })
    .max(MAX_SOURCE_URLS, `sourceUrls must name at most ${MAX_SOURCE_URLS} URLs`)
    .transform((urls) => [...new Set(urls)])
    .optional(),
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

const runNotFound = notFound('no such research run in this workspace');

export const researchRoutes = [
  researchRoute({
    method: 'get',
    path: '',
    operationId: 'listResearchRuns',
    summary: 'Research runs of the workspace, newest first (createdAt desc, id desc), optionally of one status',
    query: listQuery,
    responses: {
      200: { description: '`{ runs, nextCursor }`', schema: researchRunListSchema },
      400: '`request_malformed`: limit outside 1 to 100; `validation_failed`: unknown status or invalid cursor',
    },
    handler: async (ctx, { principal, query }) => ({ status: 200, body: await listResearchRuns(ctx.state.em, principal, query) }),
  }),
  researchRoute({
    method: 'post',
    path: '',
    operationId: 'createResearchRun',
    summary:
      'Queue a research run and start it on Temporal (Idempotency-Key required; it names the run). A replay answers 200 with the run as it is now',
    access: WORKSPACE_WRITE,
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
      400: '`validation_failed`: bad query, sourceUrls or limits, or no sourceUrls while no web search provider is configured (the message names RESEARCH_SEARCH_PROVIDER); `idempotency_key_invalid`',
      409: '`conflict`: the key was used for a run with another request',
    },
    handler: async (ctx, { principal, body, deps }) => {
      const key = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, true)!;
      const { run, deduplicated } = await createResearchRun(ctx.state.em, deps.services.research, principal, key, {
        query: body.query,
        sourceUrls: body.sourceUrls ?? [],
        limits: body.limits ?? {},
        ...(body.aiProvider ? { aiProvider: body.aiProvider } : {}),
        ...(body.aiModel ? { aiModel: body.aiModel } : {}),
      });
      if (deduplicated)
        return { status: 200, body: { run, deduplicated: true, dispatch: { dispatched: false } }, headers: { [REPLAYED_HEADER]: 'true' } };
      return { status: 202, body: { run, deduplicated: false, dispatch: { dispatched: true, queued: true, mode: 'temporal' } } };
    },
  }),
  researchRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'getResearchRun',
    summary: 'One research run with its stored source snapshots',
    params: idParams,
    responses: { 200: { description: '`{ run }`', schema: researchRunEnvelope }, ...runNotFound },
    handler: answerById('run', getResearchRun),
  }),
  researchRoute({
    method: 'post',
    path: '/{id}/cancel',
    operationId: 'cancelResearchRun',
    summary: 'Cancel a queued or running research run (its execution stops at its next step); a terminal run is returned as it is',
    access: WORKSPACE_WRITE,
    params: idParams,
    idempotency: 'required',
    responses: {
      200: { description: '`{ run }`', schema: researchRunEnvelope },
      400: '`idempotency_key_invalid`',
      ...runNotFound,
      409: REPLAY_MISMATCH,
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 200,
      body: { run: await cancelResearchRun(ctx.state.em, deps.services.research.launcher, principal, params.id) },
    }),
  }),
];
