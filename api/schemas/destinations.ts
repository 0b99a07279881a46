import { z } from 'zod';
import { isoDate, timestampFields } from './index';
import { webhookSchema } from './webhooks';

/** Response schemas of the destinations area (`/workflows/{id}/targets`). */

const targetKind = z.enum(['production', 'preview']);

const rssSourceSchema = z.strictObject({
  id: z.string(),
  kind: z.literal('rss'),
  targetId: z.string(),
  feedUrl: z.string(),
  intervalSeconds: z.number().int(),
  lastPolledAt: isoDate.nullable(),
  paused: z.boolean().describe('Not polling: paused, or the destination is not live'),
  error: z.string().nullable(),
  ...timestampFields,
});

const ciJobStatusSchema = z.strictObject({
  baselineBuildNumber: z.number().int().nullable(),
  lastSeenBuildNumber: z.number().int().nullable(),
  omittedBuildCount: z.number().int(),
  paused: z.boolean(),
  error: z.string().nullable(),
});

const ciSourceSchema = z
  .strictObject({
    id: z.string(),
    kind: z.literal('ci'),
    targetId: z.string(),
    nodeId: z.string().describe("The CI trigger node in the destination's saved version"),
    credentialId: z.string().describe('A reference; the secret and the server address are never returned'),
    jobs: z.array(z.string()),
    results: z.array(z.string()).nullable().describe('null: every result'),
    intervalSeconds: z.number().int(),
    lastPolledAt: isoDate.nullable(),
    paused: z.boolean(),
    error: z.string().nullable(),
    jobStatuses: z.record(z.string(), ciJobStatusSchema).describe('Per watched job'),
    ...timestampFields,
  })
  .meta({ id: 'CiSource' });

export const targetSchema = z
  .strictObject({
    targetId: z.string(),
    workflowId: z.string(),
    kind: targetKind,
    name: z.string(),
    revision: z.number().int().describe('Send it back as expectedRevision with every change'),
    enabled: z.boolean().describe('The deployment is on: published and not stopped'),
    candidateVersionId: z.string().nullable(),
    candidateVersion: z.number().int().nullable(),
    activeVersionId: z.string().nullable(),
    activeVersion: z.number().int().nullable(),
    activeActivationId: z.string().nullable(),
    generation: z.number().int(),
    approved: z.boolean().describe('The active version was published under a session approval'),
    connections: z.strictObject({
      bindings: z.record(z.string(), z.string()).describe('Connection alias → credential id'),
      childDependencies: z.record(z.string(), z.string()).describe('Child workflow id → its destination'),
      allowProductionReactivation: z.boolean(),
    }),
    prepared: z
      .strictObject({
        kind: z.enum(['promotion', 'rollback']),
        preparedPublicationVersionId: z.string(),
        version: z.number().int().nullable(),
        sourceTargetId: z.string().nullable(),
        sourceActivationId: z.string().nullable(),
        restoreActivationId: z.string().nullable(),
        stopAfter: z.boolean().nullable(),
        preparedAt: isoDate,
      })
      .nullable()
      .describe('A prepared promotion or rollback; publish applies it'),
    sources: z.strictObject({
      rss: z.array(rssSourceSchema),
      ci: z.array(ciSourceSchema),
      mailRoutes: z.array(z.looseObject({})).describe('Mail routes of the destination (the mailer area; empty until it exists)'),
      errtracker: z.array(z.strictObject({ webhookId: z.string(), nodeId: z.string(), live: z.boolean() })),
      overlaps: z.array(
        z.strictObject({ kind: z.enum(['rss', 'ci']), key: z.string(), sourceId: z.string(), otherTargetIds: z.array(z.string()) }),
      ),
    }),
    ...timestampFields,
  })
  .meta({ id: 'WorkflowTarget' });

export const historyEntrySchema = z.strictObject({
  activationId: z.string(),
  targetId: z.string(),
  versionId: z.string(),
  version: z.number().int(),
  displayLabel: z.string().nullable(),
  createdAt: isoDate,
  canPrepareRollback: z.boolean(),
});

export const targetListSchema = z.strictObject({
  workflowId: z.string(),
  targets: z.array(targetSchema),
  history: z.array(historyEntrySchema).optional().describe('With includeHistory=true: the latest 30 production activations, newest first'),
});

export const changeReceiptSchema = z.strictObject({
  id: z.string(),
  action: z.string(),
  workflowId: z.string(),
  targetId: z.string(),
  revision: z.number().int(),
  versionId: z.string().optional(),
  activationId: z.string().optional(),
  generation: z.number().int().optional(),
  requestId: z.string().optional(),
  preparedPublicationVersionId: z.string().optional(),
  sourceId: z.string().optional(),
  approvalId: z.string().optional(),
  stoppedTargetIds: z.array(z.string()).optional(),
  reviewHeadSha: z.string().optional().describe('request-git-review: head of the review branch'),
  pullRequestNumber: z.number().int().optional().describe('request-git-review: the pull request'),
  createdAt: isoDate,
});

export const changeResultSchema = z.strictObject({
  receipt: changeReceiptSchema,
  target: targetSchema,
  webhooks: z.array(webhookSchema).optional().describe("publish: the destination's webhooks with their own invoke URLs"),
});

const checkSchema = z.strictObject({ name: z.string(), ok: z.boolean(), message: z.string(), code: z.string().optional() });

export const publicationPreviewSchema = z.strictObject({
  ready: z.boolean(),
  checks: z.array(checkSchema),
  warnings: z.array(z.string()),
  connections: z.array(
    z.strictObject({
      alias: z.string().nullable(),
      credentialId: z.string().nullable(),
      nodeIds: z.array(z.string()),
      status: z.enum(['bound', 'unbound', 'credential_missing']),
    }),
  ),
  dependencies: z.array(
    z.strictObject({
      nodeId: z.string(),
      workflowId: z.string(),
      targetId: z.string().nullable(),
      ready: z.boolean(),
      reason: z.string().nullable(),
    }),
  ),
});

export const approvalSchema = z.strictObject({
  approval: z.strictObject({
    id: z.string(),
    workflowId: z.string(),
    targetId: z.string(),
    versionId: z.string(),
    version: z.number().int(),
    permitsReactivation: z.boolean(),
    approvedBy: z.string().describe('The approving user'),
    createdAt: isoDate,
  }),
});
