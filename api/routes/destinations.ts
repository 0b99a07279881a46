import { z } from 'zod';
import { routeGroup, ANY_KEY_READ, SESSION_ADMIN, WORKSPACE_WRITE } from '../http/route';
import { webhookWithLinks } from '../http/links';
import { requestOrigin } from '../http/urls';
import { withIdempotency } from '../middleware/idempotency';
import { bareAuthErrors, pathId, idParams } from '../schemas';
import { approvalSchema, changeResultSchema, publicationPreviewSchema, targetListSchema } from '../schemas/destinations';
import { approvePublication, CI_INTERVAL, CI_MAX_JOBS, listTargets, previewPublication, RSS_INTERVAL } from '../../services/destinations';
import { changeTarget, type TargetChange } from '../../services/publishing';
import { invalidInput } from '../../services/kernel/errors';
import { requestFingerprint } from '../../services/kernel/idempotency';

/**
 * Workflow destinations (the spec's "targets"): list, change, preview a publication, and the
 * session route an Admin or Owner approves a publication with. Workflows and destinations of
 * other workspaces are 404 here.
 */

const id = z.string().min(1).max(200);
const expectedRevision = z
  .number({ error: 'expectedRevision must be an integer' })
  .int('expectedRevision must be an integer')
  .min(1, 'expectedRevision must be at least 1');
const name = z.string().trim().min(1, 'name must not be blank').max(100, 'name must be at most 100 characters');
const interval = (bounds: { min: number; max: number }) =>
  z
    .number()
    .int('intervalSeconds must be an integer')
    .min(bounds.min, `intervalSeconds must be between ${bounds.min} and ${bounds.max}`)
    .max(bounds.max, `intervalSeconds must be between ${bounds.min} and ${bounds.max}`);
const httpUrl = z
  .string()
  .max(2048)
  .regex(/^https?:\/\/[^\s/?#]+\S*$/i, 'must be an http(s) URL');
const alias = z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'aliases are 1 to 100 letters, digits, _ . : -');
const idMap = (keys: z.ZodType<string>) => z.record(keys, id).refine((m) => Object.keys(m).length <= 100, 'at most 100 entries');

const publishFields = {
  targetId: id,
  expectedRevision,
  versionId: id,
  requestId: z.uuid({ error: 'requestId must be a UUID' }),
  sourceTargetId: id.optional(),
  sourceActivationId: id.optional(),
  restoreActivationId: id.optional(),
  resumeActivationId: id.optional(),
};
const onePreparedSource = <
  T extends { sourceTargetId?: string; sourceActivationId?: string; restoreActivationId?: string; resumeActivationId?: string },
>(
  f: T,
) =>
  [
    f.sourceTargetId !== undefined || f.sourceActivationId !== undefined,
    f.restoreActivationId !== undefined,
    f.resumeActivationId !== undefined,
  ].filter(Boolean).length <= 1;
const ONE_SOURCE =
  'Send at most one of the prepared source (sourceTargetId, sourceActivationId), restoreActivationId or resumeActivationId.';

const rssSource = z.strictObject({
  kind: z.literal('rss'),
  targetId: id,
  feedUrl: httpUrl,
  intervalSeconds: interval(RSS_INTERVAL).optional(),
});
const ciSource = z.strictObject({
  kind: z.literal('ci'),
  targetId: id,
  nodeId: id,
  credentialId: id,
  jobs: z
    .array(z.string().trim().min(1).max(200))
    .min(1, `jobs must list 1 to ${CI_MAX_JOBS} jobs`)
    .max(CI_MAX_JOBS, `jobs must list 1 to ${CI_MAX_JOBS} jobs`),
  results: z.array(z.enum(['SUCCESS', 'UNSTABLE', 'FAILURE', 'NOT_BUILT', 'ABORTED'])).optional(),
  intervalSeconds: interval(CI_INTERVAL).optional(),
});

const ACTIONS = [
  'prepare-production',
  'create-preview',
  'rename-preview',
  'rename-version',
  'save-candidate',
  'save-connections',
  'restore-candidate',
  'request-git-review',
  'prepare-promotion',
  'prepare-rollback',
  'publish',
  'stop',
  'configure-source',
] as const;

const change = z.discriminatedUnion(
  'action',
  [
    z.strictObject({ action: z.literal('prepare-production') }),
    z.strictObject({ action: z.literal('create-preview'), versionId: id, name }),
    z.strictObject({ action: z.literal('rename-preview'), targetId: id, expectedRevision, name }),
    z.strictObject({
      action: z.literal('rename-version'),
      versionId: id,
      displayLabel: z.string().max(100, 'displayLabel must be at most 100 characters'),
    }),
    z.strictObject({
      action: z.literal('save-candidate'),
      targetId: id,
      expectedRevision,
      name: z.string().trim().min(1, 'name must not be blank').max(200),
      nodes: z.array(z.looseObject({})).max(500),
      edges: z.array(z.looseObject({})).max(2000),
      description: z.string().max(5000).optional(),
    }),
    z.strictObject({
      action: z.literal('save-connections'),
      targetId: id,
      expectedRevision,
      bindings: idMap(alias),
      childDependencies: idMap(id).optional(),
      allowProductionReactivation: z.boolean().optional(),
    }),
    z.strictObject({ action: z.literal('restore-candidate'), targetId: id, expectedRevision, versionId: id }),
    z.strictObject({ action: z.literal('request-git-review'), targetId: id, expectedRevision }),
    z.strictObject({
      action: z.literal('prepare-promotion'),
      sourceTargetId: id,
      sourceActivationId: id,
      productionTargetId: id,
      expectedRevision,
      stopAfter: z.boolean().optional(),
    }),
    z.strictObject({ action: z.literal('prepare-rollback'), targetId: id, expectedRevision, activationId: id }),
    z.strictObject({ action: z.literal('publish'), ...publishFields }).refine(onePreparedSource, ONE_SOURCE),
    z.strictObject({ action: z.literal('stop'), targetId: id, expectedRevision }),
    z.strictObject({
      action: z.literal('configure-source'),
      expectedRevision,
      source: z.discriminatedUnion('kind', [rssSource, ciSource], { error: 'source.kind must be rss or ci' }),
    }),
  ],
  { error: `change.action must be one of ${ACTIONS.join(', ')}` },
);

const changeBody = z.strictObject({
  confirm: z.literal(true, { error: 'confirm: true is required' }),
  idempotencyKey: z.string().optional(),
  change,
});

/** A workflow's destinations through a workspace key. */
const targetRoute = routeGroup({
  tags: ['Workflows'],
  family: 'bare',
  access: WORKSPACE_WRITE,
  errors: {
    ...bareAuthErrors,
    403: 'Wrong key scope, or a key without write and execute authority',
    404: 'Workflow, destination, version or activation not found (also for other workspaces)',
  },
  pathPrefix: '/api/v1/workflows/{id}/targets',
});
/** Approvals are a person's act: an Admin or Owner session, never a key. */
const approvalRoute = routeGroup({ tags: ['Workflows'], family: 'bare', access: SESSION_ADMIN });

export const listTargetsRoute = targetRoute({
  method: 'get',
  path: '',
  operationId: 'listWorkflowTargets',
  summary: 'Destinations of a workflow: identities, candidate and active pointers, revisions, enabled state and sources',
  access: ANY_KEY_READ,
  params: idParams,
  query: z.object({ includeHistory: z.enum(['true', 'false'], { error: 'includeHistory must be true or false' }).optional() }),
  responses: { 200: { description: '`{ workflowId, targets, history? }`', schema: targetListSchema } },
  handler: async (ctx, { principal, params, query }) => ({
    status: 200,
    body: await listTargets(ctx.state.em, principal, params.id, { includeHistory: query.includeHistory === 'true' }),
  }),
});

export const changeTargetRoute = targetRoute({
  method: 'post',
  path: '',
  operationId: 'changeWorkflowTarget',
  summary: 'Change a destination: `{ confirm: true, change: { action, … } }` with an Idempotency-Key (header or idempotencyKey)',
  params: idParams,
  body: changeBody,
  responses: {
    200: {
      description: '`{ receipt, target, webhooks? }`; a replay of the same change by the same principal returns the same receipt',
      schema: changeResultSchema,
    },
    409: '`workflow_target_revision_conflict` (stale expectedRevision), `idempotency_replay_mismatch` (the key was used for another change or principal), `SETUP_REQUIRED`, `workflow_target_approval_required`, `workflow_candidate_changed`, …',
    503: 'SECRET_KEY missing for webhook triggers',
  },
  handler: async (ctx, { principal, params, body, deps }) => {
    const header = ctx.get('idempotency-key') || undefined;
    if (header !== undefined && body.idempotencyKey !== undefined && header !== body.idempotencyKey) {
      throw invalidInput('The Idempotency-Key header and idempotencyKey differ; send one key.', { code: 'idempotency_key_invalid' });
    }
    const key = header ?? body.idempotencyKey;
    if (!key) throw invalidInput('Idempotency-Key header or idempotencyKey field is required.', { code: 'idempotency_key_invalid' });
    // The key binds the principal (claim), the workflow and the exact change.
    const fingerprint = requestFingerprint('POST', `/api/v1/workflows/${params.id}/targets`, body.change);
    return withIdempotency(
      ctx,
      'required',
      async () => {
        const result = await changeTarget(ctx.state.em, principal, params.id, body.change as TargetChange, deps.services.publishing);
        const origin = requestOrigin(ctx);
        return {
          status: 200,
          body: { ...result, ...(result.webhooks ? { webhooks: result.webhooks.map((w) => webhookWithLinks(origin, w)) } : {}) },
        };
      },
      { key, fingerprint },
    );
  },
});

export const previewPublicationRoute = targetRoute({
  method: 'post',
  path: '/preview-publication',
  operationId: 'previewWorkflowTargetPublication',
  summary: 'What publishing would find (read-only): `{ ready, checks, warnings, connections, dependencies }`',
  params: idParams,
  body: z.strictObject(publishFields).refine(onePreparedSource, ONE_SOURCE),
  responses: {
    200: { description: 'The readiness report; publish revalidates anyway', schema: publicationPreviewSchema },
  },
  handler: async (ctx, { principal, params, body, deps }) => ({
    status: 200,
    body: await previewPublication(ctx.state.em, principal, params.id, body, { secretKey: deps.config.secretKey }),
  }),
});

export const approveTargetRoute = approvalRoute({
  method: 'post',
  path: '/api/workflows/{id}/targets/{targetId}/approvals',
  operationId: 'approveWorkflowTargetPublication',
  summary: 'Approve a prepared publication of one exact version (Admin or Owner session, same origin)',
  params: z.object({ id: pathId, targetId: pathId }),
  body: z.strictObject({ versionId: id, permitsReactivation: z.boolean().optional() }),
  responses: {
    201: {
      description: '`{ approval: { id, workflowId, targetId, versionId, version, permitsReactivation, approvedBy, createdAt } }`',
      schema: approvalSchema,
    },
    400: 'Invalid request',
    401: 'Sign-in is required.',
    403: 'Not an Admin or Owner, or a cross-origin request',
    404: 'Workflow, destination or version not found (also for other workspaces)',
    409: 'The version is not prepared for publication on the destination',
  },
  handler: async (ctx, { principal, params, body }) => ({
    status: 201,
    body: { approval: await approvePublication(ctx.state.em, principal, params.id, params.targetId, body) },
  }),
});

export const destinationRoutes = [listTargetsRoute, previewPublicationRoute, changeTargetRoute, approveTargetRoute];
