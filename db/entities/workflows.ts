import { EntitySchema } from '@mikro-orm/core';
import type { GraphEdge, GraphNode } from '../../engine/types';

export const WORKFLOW_STATUSES = ['draft', 'deployed', 'disabled'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export interface Workflow {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  status: WorkflowStatus;
  trashed: boolean;
  /** The draft (candidate) graph; deployed versions are snapshots in workflow_versions. */
  nodes: GraphNode[];
  edges: GraphEdge[];
  activeVersionId: string | null;
  templateKey: string | null;
  sourceWorkflowId: string | null;
  /** Stable identity across workspaces and repositories (bundles upsert by it); unique in a workspace. */
  externalId?: string | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkflowVersion {
  id: string;
  workflowId: string;
  workspaceId: string;
  version: number;
  name: string;
  description: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Optional display label (destinations' rename-version); null shows only the number. */
  displayLabel: string | null;
  createdById: string | null;
  createdAt: Date;
}

export const WorkflowSchema = new EntitySchema<Workflow>({
  name: 'Workflow',
  tableName: 'workflows',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    name: { type: 'string' },
    description: { type: 'string' },
    status: { type: 'string' },
    trashed: { type: 'boolean' },
    nodes: { type: 'json' },
    edges: { type: 'json' },
    // Plain column (no relation): versions point at their workflow, and a two-way relation would make inserts circular.
    activeVersionId: { type: 'string', fieldName: 'active_version_id', nullable: true },
    templateKey: { type: 'string', fieldName: 'template_key', nullable: true },
    sourceWorkflowId: { type: 'string', fieldName: 'source_workflow_id', nullable: true },
    externalId: { type: 'string', fieldName: 'external_id', nullable: true },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const WorkflowVersionSchema = new EntitySchema<WorkflowVersion>({
  name: 'WorkflowVersion',
  tableName: 'workflow_versions',
  properties: {
    id: { type: 'string', primary: true },
    workflowId: { kind: 'm:1', entity: 'Workflow', fieldName: 'workflow_id', mapToPk: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    version: { type: 'integer' },
    name: { type: 'string' },
    description: { type: 'string' },
    nodes: { type: 'json' },
    edges: { type: 'json' },
    displayLabel: { type: 'string', fieldName: 'display_label', nullable: true },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
  },
});
