import { z } from 'zod';
import { WORKFLOW_STATUSES } from '../../engine/statuses';
import { isoDate, redactionSchema, timestampFields, url } from './index';
import { webhookSchema } from './webhooks';
import { conversionReportSchema } from './extflowReport';

/** Response schemas of the workflows area (workflow objects, validation, versions, deploy results). */

/**
 * Nodes and edges are echoed as saved: drafts are stored before validation, so any object is
 * possible here; the node contract (id, type, name, config, position, disabled, retry,
 * onError) is what validation checks, and what deployed versions satisfy.
 */
export const savedNodeSchema = z.looseObject({}).describe('A graph node as saved; see the node contract in the README');
export const savedEdgeSchema = z.looseObject({}).describe('A graph edge as saved: `{ id?, source, target, sourceHandle? }`');

export const workflowSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    description: z.string(),
    status: z.enum(WORKFLOW_STATUSES),
    trashed: z.boolean(),
    nodes: z.array(savedNodeSchema).describe('Safe readers get the nodes without `config`'),
    edges: z.array(savedEdgeSchema),
    activeVersionId: z.string().nullable(),
    activeVersion: z.number().int().nullable(),
    candidateVersionId: z.string().describe('Identity of the current draft; live candidate execution names it in expectedVersionId'),
    templateKey: z.string().nullable(),
    sourceWorkflowId: z.string().nullable(),
    ...timestampFields,
    redaction: redactionSchema.optional(),
  })
  .meta({ id: 'Workflow' });

export const workflowLinksSchema = z.strictObject({
  self: url,
  version: url,
  validate: url,
  execute: url,
  status: url,
  portable: url,
  deploy: url,
});

export const validationIssueSchema = z.strictObject({
  nodeId: z.string().optional(),
  edgeId: z.string().optional(),
  code: z.enum([
    'unknown_type',
    'invalid_config',
    'duplicate_node_id',
    'dangling_edge',
    'invalid_handle',
    'unreachable_node',
    'no_trigger',
    'invalid_expression',
    'cycle',
    'multiple_inputs',
  ]),
  message: z.string(),
  severity: z.enum(['error', 'warning']),
});

export const validationResultSchema = z.strictObject({
  report: z.strictObject({
    valid: z.boolean(),
    errors: z.array(validationIssueSchema),
    warnings: z.array(validationIssueSchema),
    nodeCount: z.number().int(),
    edgeCount: z.number().int(),
  }),
  deploymentReadiness: z.strictObject({ ready: z.boolean(), blockers: z.array(z.string()) }),
  conversion: conversionReportSchema.optional().describe("Imports of the external tool's JSON only"),
});

export const workflowWithLinksSchema = z.strictObject({ workflow: workflowSchema, links: workflowLinksSchema });

export const workflowListSchema = z.strictObject({ workflows: z.array(workflowSchema), links: z.array(workflowLinksSchema) });

export const createdWorkflowSchema = z.strictObject({
  workflow: workflowSchema,
  links: workflowLinksSchema,
  importReadiness: validationResultSchema.optional().describe('Imports only'),
});

export const portableWorkflowSchema = z
  .strictObject({ name: z.string(), description: z.string(), nodes: z.array(savedNodeSchema), edges: z.array(savedEdgeSchema) })
  .meta({ id: 'PortableWorkflow' });

export const importPreviewSchema = z.strictObject({
  preview: portableWorkflowSchema,
  importReadiness: validationResultSchema,
  persisted: z.literal(false),
});

export const deployResultSchema = z.strictObject({
  workflow: workflowSchema,
  synchronizedVersionId: z.string(),
  version: z.number().int().describe('The deployed version number'),
  webhookUrl: url.nullable().describe("The first webhook trigger's invoke URL"),
  links: workflowLinksSchema.extend({ webhook: url.nullable(), invoke: url.nullable() }),
  webhooks: z.array(webhookSchema).describe('One per webhook trigger of the version'),
  schedules: z.array(z.strictObject({ scheduleId: z.string() })).describe('One Temporal Schedule per schedule trigger'),
});

export const updatedWorkflowSchema = z.union([
  createdWorkflowSchema.describe('Updated workflow; `importReadiness` after an import-replace'),
  deployResultSchema.describe('`status: deployed` deploys: the deploy result'),
]);

export const workflowVersionSchema = z.strictObject({
  id: z.string(),
  version: z.number().int(),
  displayLabel: z.string().nullable().describe('Optional label (destinations rename-version)'),
  name: z.string(),
  description: z.string(),
  active: z.boolean(),
  nodeCount: z.number().int(),
  edgeCount: z.number().int(),
  createdById: z.string().nullable(),
  createdAt: isoDate,
});

export const restoredWorkflowSchema = z.strictObject({
  workflow: workflowSchema,
  restoredVersion: z.number().int(),
  links: workflowLinksSchema,
});

/** Bundles (importBundleJson) and repository artifacts. */
export const bundleSubWorkflowStatusSchema = z.strictObject({
  resolved: z.boolean().describe('Every subworkflow reference resolves inside the bundle or the workspace'),
  references: z.array(
    z.strictObject({
      nodeId: z.string(),
      reference: z.string().describe('As written in the artifact: an externalId or a workflow id'),
      resolvedIn: z.enum(['bundle', 'workspace']).nullable(),
      workflowId: z.string().nullable(),
    }),
  ),
});

export const bundleSummarySchema = z.strictObject({
  name: z.string().nullable(),
  workflowCount: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  refused: z.number().int().describe("Workflows not imported (the external tool's bundles only; see files[])"),
});

const importActionSchema = z.enum(['created', 'updated', 'unchanged']);

/** Every workflow's fate, in bundle order (not in the contract: docs/api/extflow.md). */
export const bundleFilesSchema = z
  .array(
    z.strictObject({
      index: z.number().int().describe("The workflow's position in the bundle"),
      source: z.string().describe('Where it came from: `importBundleJson.workflows[2]`, or a file of a directory bundle'),
      externalId: z.string().nullable(),
      name: z.string().nullable(),
      fate: z.enum(['created', 'updated', 'unchanged', 'refused']),
      workflowId: z
        .string()
        .nullable()
        .describe('The workflow written or left unchanged; for a refused one, the workflow it would have overwritten'),
      reason: z.string().nullable().describe('Why it was refused'),
    }),
  )
  .describe('Every workflow of the bundle and its fate: created, updated, unchanged, or refused with the reason');

export const importedBundleSchema = z.strictObject({
  bundle: bundleSummarySchema,
  files: bundleFilesSchema,
  workflows: z.array(
    z.strictObject({
      externalId: z.string(),
      workflow: workflowSchema,
      importAction: importActionSchema,
      importReadiness: validationResultSchema,
      bundleSubWorkflowStatus: bundleSubWorkflowStatusSchema,
      links: workflowLinksSchema,
    }),
  ),
});

export const bundlePreviewSchema = z.strictObject({
  bundle: bundleSummarySchema,
  files: bundleFilesSchema,
  workflows: z.array(
    z.strictObject({
      externalId: z.string(),
      name: z.string(),
      workflowId: z.string().nullable().describe('The workflow an update would change; null for creates'),
      importAction: importActionSchema,
      importReadiness: validationResultSchema,
      bundleSubWorkflowStatus: bundleSubWorkflowStatusSchema,
    }),
  ),
  persisted: z.literal(false),
});

export const artifactReportSchema = z.strictObject({
  valid: z.boolean(),
  files: z.array(
    z.strictObject({
      path: z.string(),
      valid: z.boolean(),
      externalId: z.string().nullable(),
      name: z.string().nullable(),
      errors: z.array(z.strictObject({ path: z.string(), message: z.string() })),
      validation: validationResultSchema.nullable(),
    }),
  ),
});
