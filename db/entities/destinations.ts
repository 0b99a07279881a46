import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, timestamps, workspaceScoped } from './columns';

/**
 * Workflow destinations: one Production destination and named previews per workflow. The API
 * calls them "targets" (`targetId`, `/workflows/{id}/targets`).
 */
export type TargetKind = 'production' | 'preview';

/** A publication prepared on a destination (promotion of a preview, or a production rollback); publish applies it. */
export type PreparedPublication =
  | { kind: 'promotion'; versionId: string; sourceTargetId: string; sourceActivationId: string; stopAfter: boolean; preparedAt: string }
  | { kind: 'rollback'; versionId: string; restoreActivationId: string; preparedAt: string };

export type ActivationSource = 'deploy' | 'publish' | 'promotion' | 'rollback' | 'resume';

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

/** The key of a destination's rows (activations, approvals, sources): their id, and the destination's workspace, workflow and id. */
const targetOwned = () => ({
  ...workspaceScoped(),
  workflowId: p.string(),
  targetId: p.string(),
});

export const WorkflowTargetSchema = entity('WorkflowTarget', 'workflow_targets', {
  ...workspaceScoped(),
  workflowId: p.string(),
  kind: p.string().$type<TargetKind>(),
  name: p.string(),
  /** Optimistic concurrency: every change names the revision it read (`expectedRevision`) and bumps it. */
  revision: p.integer(),
  /** The deployment is on: published and not stopped. */
  enabled: p.boolean(),
  /** The editor's saved version for this destination. */
  candidateVersionId: p.string().nullable(),
  /** The published version. For production it mirrors `workflows.active_version_id`. */
  activeVersionId: p.string().nullable(),
  activeActivationId: p.string().nullable(),
  /** How many activations the destination has had (the last one's generation). */
  generation: p.integer(),
  /** Connection alias → credential id. */
  connectionBindings: p.json<Record<string, string>>(),
  /** Child workflow id → the destination (targetId) of that child this destination depends on. */
  childDependencies: p.json<Record<string, string>>(),
  allowProductionReactivation: p.boolean(),
  prepared: p.json<PreparedPublication>().nullable(),
  createdById: p.string().nullable(),
  ...timestamps(),
});
export type WorkflowTarget = InferEntity<typeof WorkflowTargetSchema>;

export const TargetActivationSchema = entity('TargetActivation', 'workflow_target_activations', {
  ...targetOwned(),
  versionId: p.string(),
  generation: p.integer(),
  source: p.string().$type<ActivationSource>(),
  /** The session approval it was published under; null for legacy deploys (POST /deploy). */
  approvalId: p.string().nullable(),
  requestId: p.uuid().nullable(),
  connectionBindings: p.json<Record<string, string>>(),
  createdById: p.string().nullable(),
  ...createdAt(),
});
/** One publication of a version on a destination; production's form the history. */
export type TargetActivation = InferEntity<typeof TargetActivationSchema>;

export const TargetApprovalSchema = entity('TargetApproval', 'workflow_target_approvals', {
  ...targetOwned(),
  versionId: p.string(),
  /** May be reused to reactivate this snapshot later (production rollback). */
  permitsReactivation: p.boolean(),
  approvedById: p.string(),
  /** The activation that used it; an ordinary approval publishes once. */
  consumedByActivationId: p.string().nullable(),
  ...createdAt(),
});
/** An Admin's or Owner's approval of one exact version on one destination (session only). */
export type TargetApproval = InferEntity<typeof TargetApprovalSchema>;

export const TargetSourceSchema = entity('TargetSource', 'workflow_target_sources', {
  ...targetOwned(),
  kind: p.string().$type<TargetSourceKind>(),
  /** What makes a source unique on its destination: the feed URL, or the CI trigger node. */
  sourceKey: p.string(),
  config: p.json<RssSourceConfig | CiSourceConfig>(),
  state: p.json<TargetSourceState>(),
  createdById: p.string().nullable(),
  ...timestamps(),
});
/** An event source of a destination, stored here and polled by the event-sources area. */
export type TargetSource = InferEntity<typeof TargetSourceSchema>;
