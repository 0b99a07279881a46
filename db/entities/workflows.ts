import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, references, timestamps } from './columns';
import { workspaceOwned } from './workspaces';
import type { GraphEdge, GraphNode } from '../../engine/types';
import type { WorkflowStatus } from '../../engine/statuses';
export type { WorkflowStatus } from '../../engine/statuses';

export const WorkflowSchema = entity('Workflow', 'workflows', {
  ...workspaceOwned(),
  name: p.string(),
  description: p.string(),
  status: p.string().$type<WorkflowStatus>(),
  trashed: p.boolean(),
  /** The draft (candidate) graph; deployed versions are snapshots in workflow_versions. */
  nodes: p.json<GraphNode[]>(),
  edges: p.json<GraphEdge[]>(),
  // Plain column (no relation): versions point at their workflow, and a two-way relation would make inserts circular.
  activeVersionId: p.string().nullable(),
  templateKey: p.string().nullable(),
  sourceWorkflowId: p.string().nullable(),
  /** Stable identity across workspaces and repositories (bundles upsert by it); unique in a workspace. */
  externalId: p.string().nullable(),
  createdById: p.string().nullable(),
  ...timestamps(),
});
export type Workflow = InferEntity<typeof WorkflowSchema>;

export const WorkflowVersionSchema = entity('WorkflowVersion', 'workflow_versions', {
  id: p.string().primary(),
  workflowId: references(WorkflowSchema, 'workflow_id'),
  workspaceId: p.string(),
  version: p.integer(),
  name: p.string(),
  description: p.string(),
  nodes: p.json<GraphNode[]>(),
  edges: p.json<GraphEdge[]>(),
  /** Optional display label (destinations' rename-version); null shows only the number. */
  displayLabel: p.string().nullable(),
  createdById: p.string().nullable(),
  ...createdAt(),
});
export type WorkflowVersion = InferEntity<typeof WorkflowVersionSchema>;
