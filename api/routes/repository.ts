import { z } from 'zod';
import { routeGroup, type AnyRoute, SESSION_ADMIN, SESSION_READ, WORKSPACE_READ, WORKSPACE_WRITE, WORKSPACE_ADMIN } from '../http/route';
import { bareAuthErrors, idParams } from '../schemas';
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
  const repositoryRoute = routeGroup({ tags: [tag], family: 'bare', access: access.read, errors: bareAuthErrors, pathPrefix: base });
  return [
    repositoryRoute({
      method: 'get',
      path: '',
      operationId: `getWorkflowRepository${suffix}`,
      summary: "The workspace's workflow repository, or null",
      responses: {
        200: { description: '`{ repository }`', schema: z.strictObject({ repository: repositorySchema.nullable() }) },
      },
      handler: async (ctx, { principal }) => ({ status: 200, body: { repository: await getRepository(ctx.state.em, principal!) } }),
    }),
    repositoryRoute({
      method: 'put',
      path: '',
      operationId: `setWorkflowRepository${suffix}`,
      summary:
        'Configure the workflow repository (Admin or Owner): a smart-HTTP Git remote (`remoteUrl`) or a bare repository (`localPath`), branch, path prefix, repo credential, pulls API repository',
      access: access.write,
      body: repositoryBody,
      responses: { 200: { description: '`{ repository }`', schema: z.strictObject({ repository: repositorySchema }) } },
      handler: async (ctx, { principal, body }) => ({
        status: 200,
        body: { repository: await setRepository(ctx.state.em, ctx.deps.services.repository, principal!, body) },
      }),
    }),
    repositoryRoute({
      method: 'delete',
      path: '',
      operationId: `deleteWorkflowRepository${suffix}`,
      summary: 'Remove the workflow repository (Admin or Owner); deploys stop needing reviews',
      access: access.write,
      responses: {
        200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) },
        404: 'No repository',
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
/** Review and sync of one workflow against the repository. */
const reviewRoute = routeGroup({
  tags: ['Workflow repository'],
  family: 'bare',
  access: WORKSPACE_READ,
  errors: {
    ...bareAuthErrors,
    404: 'Workflow or artifact not found',
    409: 'No repository (SETUP_REQUIRED), review not open, or branch moved',
  },
  pathPrefix: '/api/v1/workflows/{id}',
});

export const repositoryRoutes: AnyRoute[] = [
  ...repositoryRoutesAt('/api/v1/workflow-repository', { read: WORKSPACE_READ, write: WORKSPACE_ADMIN }, '', 'Workflow repository'),
  ...repositoryRoutesAt(
    '/api/workflow-repository',
    { read: SESSION_READ, write: SESSION_ADMIN },
    'Session',
    'Workflow repository (session)',
  ),
  reviewRoute({
    method: 'get',
    path: '/review',
    operationId: 'getWorkflowReview',
    summary: 'Review status: open, merged or closed, head sha, synced',
    params: idParams,
    responses: {
      200: { description: '`{ review }` (null before the first review)', schema: z.strictObject({ review: reviewSchema.nullable() }) },
    },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: await getReview(ctx.state.em, ctx.deps.services.repository, principal!, params.id),
    }),
  }),
  reviewRoute({
    method: 'post',
    path: '/review',
    operationId: 'requestWorkflowReview',
    summary: "Write the draft's artifact to the review branch and open (or update) its pull request (Member or above)",
    access: WORKSPACE_WRITE,
    params: idParams,
    body: z
      .object({
        expectedHeadSha: z
          .string()
          .regex(/^[0-9a-f]{40}$/, 'expectedHeadSha must be a 40-character commit sha')
          .optional(),
      })
      .strict(),
    responses: { 200: { description: '`{ review }`', schema: z.strictObject({ review: reviewSchema }) } },
    handler: async (ctx, { principal, params, body }) => ({
      status: 200,
      body: await requestReview(ctx.state.em, ctx.deps.services.repository, principal, params.id, body),
    }),
  }),
  reviewRoute({
    method: 'get',
    path: '/sync-from-repo',
    operationId: 'previewWorkflowSync',
    summary: 'The artifact at `?ref=` (default: the base branch) against the draft; nothing written',
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
    },
    handler: async (ctx, { principal, params, query }) => ({
      status: 200,
      body: await previewSync(ctx.state.em, ctx.deps.services.repository, principal!, params.id, query.ref),
    }),
  }),
  reviewRoute({
    method: 'post',
    path: '/sync-from-repo',
    operationId: 'importWorkflowSync',
    summary: 'Import the artifact at `ref` (default: the base branch) as the draft (Admin or Owner)',
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
    },
    handler: async (ctx, { principal, params, body }) => ({
      status: 200,
      body: await importSync(ctx.state.em, ctx.deps.services.repository, principal!, params.id, body.ref),
    }),
  }),
];
