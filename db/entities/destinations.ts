import { EntitySchema } from '@mikro-orm/core';

/**
 * Workflow destinations: one Production destination and named previews per workflow. The API
 * calls them "targets" (`targetId`, `/workflows/{id}/targets`).
 */
export type TargetKind = 'production' | 'preview';

/** A publication prepared on a destination (promotion of a preview, or a production rollback); publish applies it. */
export type PreparedPublication =
  | { kind: 'promotion'; versionId: string; sourceTargetId: string; sourceActivationId: string; stopAfter: boolean; preparedAt: string }
  | { kind: 'rollback'; versionId: string; restoreActivationId: string; preparedAt: string };

export interface WorkflowTarget {
  id: string;
  workspaceId: string;
  workflowId: string;
  kind: TargetKind;
  name: string;
  /** Optimistic concurrency: every change names the revision it read (`expectedRevision`) and bumps it. */
  revision: number;
  /** The deployment is on: published and not stopped. */
  enabled: boolean;
  /** The editor's saved version for this destination. */
  candidateVersionId: string | null;
  /** The published version. For production it mirrors `workflows.active_version_id`. */
  activeVersionId: string | null;
  activeActivationId: string | null;
  /** How many activations the destination has had (the last one's generation). */
  generation: number;
  /** Connection alias → credential id. */
  connectionBindings: Record<string, string>;
  /** Child workflow id → the destination (targetId) of that child this destination depends on. */
  childDependencies: Record<string, string>;
  allowProductionReactivation: boolean;
  prepared: PreparedPublication | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export type ActivationSource = 'deploy' | 'publish' | 'promotion' | 'rollback' | 'resume';

/** One publication of a version on a destination; production's form the history. */
export interface TargetActivation {
  id: string;
  workspaceId: string;
  workflowId: string;
  targetId: string;
  versionId: string;
  generation: number;
  source: ActivationSource;
  /** The session approval it was published under; null for legacy deploys (POST /deploy). */
  approvalId: string | null;
  requestId: string | null;
  connectionBindings: Record<string, string>;
  createdById: string | null;
  createdAt: Date;
}

/** An Admin's or Owner's approval of one exact version on one destination (session only). */
export interface TargetApproval {
  id: string;
  workspaceId: string;
  workflowId: string;
  targetId: string;
  versionId: string;
  /** May be reused to reactivate this snapshot later (production rollback). */
  permitsReactivation: boolean;
  approvedById: string;
  /** The activation that used it; an ordinary approval publishes once. */
  consumedByActivationId: string | null;
  createdAt: Date;
}

export type TargetSourceKind = 'rss' | 'ci';

export interface RssSourceConfig {
  feedUrl: string;
  intervalSeconds: number;
}

export interface CiSourceConfig {
  nodeId: string;
  credentialId: string;
  jobs: string[];
  /** null: every result. */
  results: string[] | null;
  intervalSeconds: number;
  /** The user the source is configured and polled as. */
  userId: string | null;
}

export interface CiJobState {
  baselineBuildNumber: number | null;
  lastSeenBuildNumber: number | null;
  omittedBuildCount: number;
  paused: boolean;
  error: string | null;
}

export interface TargetSourceState {
  lastPolledAt?: string | null;
  paused?: boolean;
  error?: string | null;
  jobStatuses?: Record<string, CiJobState>;
}

/** An event source of a destination, stored here and polled by the event-sources area. */
export interface TargetSource {
  id: string;
  workspaceId: string;
  workflowId: string;
  targetId: string;
  kind: TargetSourceKind;
  /** What makes a source unique on its destination: the feed URL, or the CI trigger node. */
  sourceKey: string;
  config: RssSourceConfig | CiSourceConfig;
  state: TargetSourceState;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const ts = (fieldName: string) => ({ type: 'Date', fieldName, columnType: 'timestamptz' }) as const;

export const WorkflowTargetSchema = new EntitySchema<WorkflowTarget>({
  name: 'WorkflowTarget',
  tableName: 'workflow_targets',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    kind: { type: 'string' },
    name: { type: 'string' },
    revision: { type: 'integer' },
    enabled: { type: 'boolean' },
    candidateVersionId: { type: 'string', fieldName: 'candidate_version_id', nullable: true },
    activeVersionId: { type: 'string', fieldName: 'active_version_id', nullable: true },
    activeActivationId: { type: 'string', fieldName: 'active_activation_id', nullable: true },
    generation: { type: 'integer' },
    connectionBindings: { type: 'json', fieldName: 'connection_bindings' },
    childDependencies: { type: 'json', fieldName: 'child_dependencies' },
    allowProductionReactivation: { type: 'boolean', fieldName: 'allow_production_reactivation' },
    prepared: { type: 'json', nullable: true },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const TargetActivationSchema = new EntitySchema<TargetActivation>({
  name: 'TargetActivation',
  tableName: 'workflow_target_activations',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    targetId: { type: 'string', fieldName: 'target_id' },
    versionId: { type: 'string', fieldName: 'version_id' },
    generation: { type: 'integer' },
    source: { type: 'string' },
    approvalId: { type: 'string', fieldName: 'approval_id', nullable: true },
    requestId: { type: 'uuid', fieldName: 'request_id', nullable: true },
    connectionBindings: { type: 'json', fieldName: 'connection_bindings' },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    createdAt: ts('created_at'),
  },
});

export const TargetApprovalSchema = new EntitySchema<TargetApproval>({
  name: 'TargetApproval',
  tableName: 'workflow_target_approvals',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    targetId: { type: 'string', fieldName: 'target_id' },
    versionId: { type: 'string', fieldName: 'version_id' },
    permitsReactivation: { type: 'boolean', fieldName: 'permits_reactivation' },
    approvedById: { type: 'string', fieldName: 'approved_by_id' },
    consumedByActivationId: { type: 'string', fieldName: 'consumed_by_activation_id', nullable: true },
    createdAt: ts('created_at'),
  },
});

export const TargetSourceSchema = new EntitySchema<TargetSource>({
  name: 'TargetSource',
  tableName: 'workflow_target_sources',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    targetId: { type: 'string', fieldName: 'target_id' },
    kind: { type: 'string' },
    sourceKey: { type: 'string', fieldName: 'source_key' },
    config: { type: 'json' },
    state: { type: 'json' },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});
