import { z } from 'zod';
import { routeGroup, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { answerById } from '../http/handlers';
import { notFound } from '../http/envelopeErrors';
import { boundedOptions, idCursorPage, pathId, idParams } from '../schemas';
import { connectorDeletedSchema, connectorEnvelope, connectorListSchema, syncRunEnvelope, syncRunListSchema } from '../schemas/knowledge';
import { REPLAYED_HEADER } from '../middleware/idempotency';
import { invalidInput } from '../../services/kernel/errors';
import { parseIdempotencyKey } from '../../services/kernel/idempotency';
import { CONNECTOR_PROVIDER_IDS } from '../../engine/statuses';
import {
  cancelSyncRun,
  createConnector,
  deleteConnector,
  getConnector,
  getSyncRun,
  invokeSyncCapability,
  listConnectors,
  listSyncRuns,
  startSyncRun,
  SYNC_CAPABILITY,
  SYNC_MESSAGES,
  SYNC_OPTION_BOUNDS,
  updateConnector,
} from '../../services/knowledge';

/**
 * Knowledge connectors and their sync runs, in the envelope family. Mutations need an
 * Idempotency-Key (400 `idempotency_key_invalid`). The run route handles its key itself: the key
 * names the run (`ksr_…`), and a replay re-queues a failed or cancelled run instead of replaying
 * a stored answer.
 */

const connectorRoute = routeGroup({
  tags: ['Knowledge connectors'],
  family: 'envelope',
  access: WORKSPACE_READ,
  pathPrefix: '/api/v1/knowledge-connectors',
});

const name = z.string().trim().min(1, 'must not be empty after trimming').max(200, 'must be at most 200 characters');
const config = z.record(z.string(), z.unknown());
const createBody = z.strictObject({
  knowledgeBaseId: pathId,
  providerId: z.enum(CONNECTOR_PROVIDER_IDS, { error: `providerId must be one of ${CONNECTOR_PROVIDER_IDS.join(', ')}` }),
  name,
  config: config.optional(),
});
const patchBody = z.strictObject({
  name: name.optional(),
  config: config.optional(),
  nextSyncAt: z.iso.datetime({ offset: true, error: 'nextSyncAt must be an ISO-8601 date-time or null' }).nullable().optional(),
});
const syncOptions = boundedOptions(SYNC_OPTION_BOUNDS, 'default');
/** Only `options` is accepted; other keys are refused in the handler with the spec's message. */
const runBody = z.looseObject({ options: syncOptions.optional() });
/** The agent capability's body: connectorId and the bounded options as input, and the confirmation. */
const capabilityBody = z.strictObject({ input: syncOptions.extend({ connectorId: pathId }), confirm: z.boolean().optional() });
const capabilityResponse = z.strictObject({
  capability: z.literal(SYNC_CAPABILITY),
  effect: z.literal('write'),
  run: syncRunEnvelope.shape.run,
});
const listQuery = z.object({ knowledgeBaseId: pathId.optional(), ...idCursorPage });
const runsQuery = z.object(idCursorPage);
const runParams = z.object({ id: pathId, runId: pathId });

/** Outcomes of executing a run within the request (the runs route and the knowledge.sync capability). */
const runOutcomeErrors = {
  500: '`internal_error`: the provider failed; the run is persisted failed',
  503: '`service_unavailable`: the run did not finish within the wait; read it with GET run',
};

export const knowledgeConnectorRoutes = [
  connectorRoute({
    method: 'get',
    path: '',
    operationId: 'listKnowledgeConnectors',
    summary:
      'Connectors of the workspace (newest first; `cursor` is the last connector id of the previous page) and the providers registry',
    query: listQuery,
    responses: {
      200: { description: '`{ connectors, nextCursor, providers }`', schema: connectorListSchema },
      400: '`request_malformed`: bad limit; `validation_failed`: unknown cursor',
    },
    handler: async (ctx, { principal, query, deps }) => ({
      status: 200,
      body: await listConnectors(ctx.state.em, principal, deps.services.knowledge.config.certifiedProviders, query),
    }),
  }),
  connectorRoute({
    method: 'post',
    path: '',
    operationId: 'createKnowledgeConnector',
    summary: 'Create a connector: a provider, a name unique in its knowledge base, and config with `credentialId` and provider filters',
    access: WORKSPACE_WRITE,
    body: createBody,
    idempotency: 'required',
    responses: {
      201: { description: '`{ connector }`', schema: connectorEnvelope },
      400: '`validation_failed`: bad body, unknown providerId, config without credentialId; `idempotency_key_invalid`',
      ...notFound(),
      409: '`conflict`: a connector of that name exists in the knowledge base; `idempotency_replay_mismatch`',
    },
    handler: async (ctx, { principal, body }) => ({
      status: 201,
      body: { connector: await createConnector(ctx.state.em, principal, body) },
    }),
  }),
  connectorRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'getKnowledgeConnector',
    summary: 'One connector',
    params: idParams,
    responses: { 200: { description: '`{ connector }`', schema: connectorEnvelope }, ...notFound() },
    handler: answerById('connector', getConnector),
  }),
  connectorRoute({
    method: 'patch',
    path: '/{id}',
    operationId: 'updateKnowledgeConnector',
    summary: 'Rename, replace config (with credentialId) or set nextSyncAt (stored only)',
    access: WORKSPACE_WRITE,
    params: idParams,
    body: patchBody,
    idempotency: 'required',
    responses: {
      200: { description: '`{ connector }`', schema: connectorEnvelope },
      400: '`validation_failed`; `idempotency_key_invalid`',
      ...notFound(),
      409: '`conflict`: duplicate name; `idempotency_replay_mismatch`',
    },
    handler: async (ctx, { principal, params, body }) => ({
      status: 200,
      body: {
        connector: await updateConnector(ctx.state.em, principal, params.id, {
          name: body.name,
          config: body.config,
          nextSyncAt: body.nextSyncAt === undefined ? undefined : body.nextSyncAt === null ? null : new Date(body.nextSyncAt),
        }),
      },
    }),
  }),
  connectorRoute({
    method: 'delete',
    path: '/{id}',
    operationId: 'deleteKnowledgeConnector',
    summary: 'Delete a connector and its runs; its documents stay, with connectorId cleared',
    access: WORKSPACE_WRITE,
    params: idParams,
    idempotency: 'required',
    responses: {
      200: { description: '`{ deleted: true, connectorId }`', schema: connectorDeletedSchema },
      400: '`idempotency_key_invalid`',
      ...notFound(),
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 200,
      body: await deleteConnector(ctx.state.em, deps.services.knowledge.syncLauncher, principal, params.id),
    }),
  }),
  connectorRoute({
    method: 'get',
    path: '/{id}/runs',
    operationId: 'listKnowledgeSyncRuns',
    summary: 'Sync runs of a connector, newest first (`cursor` is the last run id of the previous page)',
    params: idParams,
    query: runsQuery,
    responses: {
      200: { description: '`{ runs, nextCursor }`', schema: syncRunListSchema },
      400: '`request_malformed`: bad limit; `validation_failed`: unknown cursor',
      ...notFound(),
    },
    handler: async (ctx, { principal, params, query }) => ({
      status: 200,
      body: await listSyncRuns(ctx.state.em, principal, params.id, query),
    }),
  }),
  connectorRoute({
    method: 'post',
    path: '/{id}/runs',
    operationId: 'startKnowledgeSyncRun',
    summary:
      'Queue and execute one bounded sync run (Idempotency-Key required; it names the run). Answers when the batch is applied; a replay re-queues a failed or cancelled run and returns a succeeded one',
    access: WORKSPACE_WRITE,
    params: idParams,
    body: runBody,
    responses: {
      201: {
        description: '`{ run }` (succeeded); a replay of a succeeded run carries Idempotency-Replayed: true',
        schema: syncRunEnvelope,
      },
      400: '`validation_failed`: keys other than options, option bounds, invalid provider filters or cursor, fetch budget exceeded; `idempotency_key_invalid`',
      ...notFound(),
      409: '`conflict`: uncertified provider, lease held by another run, run not queued, lease lost or expired, same key with other options, cancelled; `setup_required`: credential missing or unusable, or the outbound guard refuses the provider address (the run is persisted failed)',
      ...runOutcomeErrors,
    },
    handler: async (ctx, { principal, params, body, deps }) => {
      const key = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, true)!;
      if (Object.keys(body).some((k) => k !== 'options')) throw invalidInput(SYNC_MESSAGES.onlyOptions, { code: 'validation_failed' });
      const options = body.options ?? syncOptions.parse({});
      const { run, replayed } = await startSyncRun(
        ctx.state.em,
        deps.services.knowledge,
        deps.services.credentials.keys,
        principal,
        params.id,
        key,
        options,
      );
      return { status: 201, body: { run }, headers: replayed ? { [REPLAYED_HEADER]: 'true' } : undefined };
    },
  }),
  connectorRoute({
    method: 'post',
    path: '/capabilities/knowledge.sync',
    operationId: 'invokeKnowledgeSyncCapability',
    summary:
      'Agent capability `knowledge.sync`: the runs route with `{ input: { connectorId, maxPages?, maxItems?, maxBytes?, timeoutMs? }, confirm: true }`; Idempotency-Key required (it names the run, as on POST …/runs)',
    access: WORKSPACE_WRITE,
    body: capabilityBody,
    responses: {
      201: {
        description: '`{ capability: knowledge.sync, effect: write, run }` (succeeded); a replay carries Idempotency-Replayed: true',
        schema: capabilityResponse,
      },
      400: '`validation_failed`: no confirm: true, option bounds, unknown keys; `idempotency_key_invalid`',
      ...notFound(),
      409: 'as POST …/runs: uncertified provider (no knowledge.sync capability), lease, same key with other options; `setup_required`',
      ...runOutcomeErrors,
    },
    handler: async (ctx, { principal, body, deps }) => {
      const idempotencyKey = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, true);
      const { replayed, ...answer } = await invokeSyncCapability(
        ctx.state.em,
        deps.services.knowledge,
        deps.services.credentials.keys,
        principal,
        {
          input: body.input,
          confirm: body.confirm,
          idempotencyKey,
        },
      );
      return { status: 201, body: answer, headers: replayed ? { [REPLAYED_HEADER]: 'true' } : undefined };
    },
  }),
  connectorRoute({
    method: 'get',
    path: '/{id}/runs/{runId}',
    operationId: 'getKnowledgeSyncRun',
    summary: 'One sync run',
    params: runParams,
    responses: { 200: { description: '`{ run }`', schema: syncRunEnvelope }, ...notFound() },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: { run: await getSyncRun(ctx.state.em, principal, params.id, params.runId) },
    }),
  }),
  connectorRoute({
    method: 'post',
    path: '/{id}/runs/{runId}/cancel',
    operationId: 'cancelKnowledgeSyncRun',
    summary: 'Cancel a queued or running sync run (its execution is cancelled); 409 from a terminal status',
    access: WORKSPACE_WRITE,
    params: runParams,
    idempotency: 'required',
    responses: {
      200: { description: '`{ run }` with status cancelled', schema: syncRunEnvelope },
      400: '`idempotency_key_invalid`',
      ...notFound(),
      409: '`conflict`: Cannot cancel a {status} knowledge sync run.',
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 200,
      body: { run: await cancelSyncRun(ctx.state.em, deps.services.knowledge, principal, params.id, params.runId) },
    }),
  }),
];
