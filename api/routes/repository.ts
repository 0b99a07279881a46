import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route';
import { bareAuthErrors, bareErrorSchema, pathId } from '../schemas';
import { workflowSchema, validationResultSchema, savedEdgeSchema, savedNodeSchema } from '../schemas/workflows';
import type { Access } from '../middleware/auth';
import {
  deleteRepository,
  getRepository,
  getReview,
  importSync,
  previewSync,
  requestReview,
  setRepository,
} from '../../services/repository';

const repositorySchema = z.strictObject({
  localPath: z.string().nullable(),
  remoteUrl: z.string().nullable(),
  branch: z.string(),
  pathPrefix: z.string(),
  credentialId: z.string(),
  pullsRepo: z.string(),
  updatedAt: z.string(),
});
const repositoryBody = z
  .object({
    localPath: z.string().min(1).max(1000).optional(),
    remoteUrl: z.string().min(1).max(2000).optional(),
    branch: z.string().regex(/^[A-Za-z0-9._/-]{1,200}$/, 'branch must be a Git branch name'),
    pathPrefix: z.string().max(500).optional(),
    credentialId: z.string().min(1),
    pullsRepo: z.string().regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/, 'pullsRepo must be owner/name'),
  })
  .strict();

function repositoryRoutesAt(base: string, access: { read: Access; write: Access }, suffix: string, tag: string): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: base,
      operationId: `getWorkflowRepository${suffix}`,
      summary: "The workspace's workflow repository, or null",
      tags: [tag],
      family: 'bare',
      access: access.read,
      responses: {
        200: { description: '`{ repository }`', schema: z.strictObject({ repository: repositorySchema.nullable() }) },
        ...bareAuthErrors,
      },
      handler: async (ctx, { principal }) => ({ status: 200, body: { repository: await getRepository(ctx.state.em, principal!) } }),
    }),
    defineRoute({
      method: 'put',
      path: base,
      operationId: `setWorkflowRepository${suffix}`,
      summary:
        'Configure the workflow repository (Admin or Owner): a smart-HTTP Git remote (`remoteUrl`) or a bare repository (`localPath`), branch, path prefix, repo credential, pulls API repository',
      tags: [tag],
      family: 'bare',
      access: access.write,
      body: repositoryBody,
      responses: { 200: { description: '`{ repository }`', schema: z.strictObject({ repository: repositorySchema }) }, ...bareAuthErrors },
      handler: async (ctx, { principal, body }) => ({
        status: 200,
        body: { repository: await setRepository(ctx.state.em, ctx.deps.services.repository, principal!, body) },
      }),
    }),
    defineRoute({
      method: 'delete',
      path: base,
      operationId: `deleteWorkflowRepository${suffix}`,
      summary: 'Remove the workflow repository (Admin or Owner); deploys stop needing reviews',
      tags: [tag],
      family: 'bare',
      access: access.write,
      responses: {
        200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) },
        ...bareAuthErrors,
        404: { description: 'No repository', schema: bareErrorSchema },
      },
      handler: async (ctx, { principal }) => {
        await deleteRepository(ctx.state.em, principal!);
        return { status: 200, body: { deleted: true } };
      },
    }),
  ];
}

const reviewSchema = z.strictObject({
  workflowId: z.string(),
  externalId: z.string(),
  status: z.enum(['open', 'merged', 'closed']),
  branch: z.string(),
  baseBranch: z.string(),
  headSha: z.string(),
  mergeCommitSha: z.string().nullable(),
  pullRequest: z.strictObject({ number: z.number().int(), url: z.string().nullable() }),
  reviewedCandidateVersionId: z.string(),
  candidateVersionId: z.string(),
  candidateChanged: z.boolean(),
  synced: z.boolean(),
});
const idParams = z.object({ id: pathId });
const errors = {
  ...bareAuthErrors,
  404: { description: 'Workflow or artifact not found', schema: bareErrorSchema },
  409: { description: 'No repository (SETUP_REQUIRED), review not open, or branch moved', schema: bareErrorSchema },
};

export const repositoryRoutes: AnyRoute[] = [
  ...repositoryRoutesAt(
    '/api/v1/workflow-repository',
    { read: { kind: 'apiKey', scopes: 'workspace', roles: 'read' }, write: { kind: 'apiKey', scopes: 'workspace', roles: 'admin' } },
    '',
    'Workflow repository',
  ),
  ...repositoryRoutesAt(
    '/api/workflow-repository',
    { read: { kind: 'session', roles: 'read' }, write: { kind: 'session', roles: 'admin' } },
    'Session',
    'Workflow repository (session)',
  ),
  defineRoute({
    method: 'get',
    path: '/api/v1/workflows/{id}/review',
    operationId: 'getWorkflowReview',
    summary: 'Review status: open, merged or closed, head sha, synced',
    tags: ['Workflow repository'],
    family: 'bare',
    access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
    params: idParams,
    responses: {
      200: { description: '`{ review }` (null before the first review)', schema: z.strictObject({ review: reviewSchema.nullable() }) },
      ...errors,
    },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: await getReview(ctx.state.em, ctx.deps.services.repository, principal!, params.id),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/workflows/{id}/review',
    operationId: 'requestWorkflowReview',
    summary: "Write the draft's artifact to the review branch and open (or update) its pull request (Member or above)",
    tags: ['Workflow repository'],
    family: 'bare',
    access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
    params: idParams,
    body: z
      .object({
        expectedHeadSha: z
          .string()
          .regex(/^[0-9a-f]{40}$/, 'expectedHeadSha must be a 40-character commit sha')
          .optional(),
      })
      .strict(),
    responses: { 200: { description: '`{ review }`', schema: z.strictObject({ review: reviewSchema }) }, ...errors },
    handler: async (ctx, { principal, params, body }) => ({
      status: 200,
      body: await requestReview(ctx.state.em, ctx.deps.services.repository, principal!, params.id, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/workflows/{id}/sync-from-repo',
    operationId: 'previewWorkflowSync',
    summary: 'The artifact at `?ref=` (default: the base branch) against the draft; nothing written',
    tags: ['Workflow repository'],
    family: 'bare',
    access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
    params: idParams,
    query: z.object({
      ref: z
        .string()
        .regex(/^[A-Za-z0-9._/-]{1,200}$/, 'ref must be a branch name or commit sha')
        .optional(),
    }),
    responses: {
      200: {
        description: 'Preview',
        schema: z.strictObject({
          ref: z.string(),
          commit: z.string(),
          externalId: z.string(),
          artifact: z.strictObject({
            name: z.string(),
            description: z.string(),
            nodes: z.array(savedNodeSchema),
            edges: z.array(savedEdgeSchema),
          }),
          draft: z.strictObject({ name: z.string(), description: z.string(), candidateVersionId: z.string() }),
          repositoryCandidateVersionId: z.string(),
          changed: z.boolean(),
          importReadiness: validationResultSchema,
          persisted: z.literal(false),
        }),
      },
      ...errors,
    },
    handler: async (ctx, { principal, params, query }) => ({
      status: 200,
      body: await previewSync(ctx.state.em, ctx.deps.services.repository, principal!, params.id, query.ref),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/workflows/{id}/sync-from-repo',
    operationId: 'importWorkflowSync',
    summary: 'Import the artifact at `ref` (default: the base branch) as the draft (Admin or Owner)',
    tags: ['Workflow repository'],
    family: 'bare',
    access: { kind: 'apiKey', scopes: 'workspace', roles: 'admin' },
    params: idParams,
    body: z
      .object({
        ref: z
          .string()
          .regex(/^[A-Za-z0-9._/-]{1,200}$/, 'ref must be a branch name or commit sha')
          .optional(),
      })
      .strict(),
    responses: {
      200: {
        description: '`{ workflow, ref, commit, importReadiness }`',
        schema: z.strictObject({ workflow: workflowSchema, ref: z.string(), commit: z.string(), importReadiness: validationResultSchema }),
      },
      ...errors,
    },
    handler: async (ctx, { principal, params, body }) => ({
      status: 200,
      body: await importSync(ctx.state.em, ctx.deps.services.repository, principal!, params.id, body.ref),
    }),
  }),
];
