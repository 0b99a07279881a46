import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamps, timestamptz } from './columns';

export const WorkspaceRepositorySchema = entity('WorkspaceRepository', 'workspace_repositories', {
  workspaceId: p.string().primary(),
  /** A bare Git repository inside WORKFLOW_REPOSITORY_ROOT; null when the repository is a remote. */
  localPath: p.string().nullable(),
  /** A smart-HTTP Git remote (http or https); null for a local repository. */
  remoteUrl: p.string().nullable(),
  branch: p.string(),
  /** Folder of the artifacts inside the repository ('' for the root). */
  pathPrefix: p.string(),
  /** The `repo` credential whose token and baseUrl reach the pulls API. */
  credentialId: p.string(),
  /** `owner/name` on the pulls API. */
  pullsRepo: p.string(),
  updatedAt: timestamptz('updated_at'),
});
/** A workspace's workflow repository: where review writes artifacts and sync reads them. */
export type WorkspaceRepository = InferEntity<typeof WorkspaceRepositorySchema>;

export const WorkflowReviewSchema = entity('WorkflowReview', 'workflow_reviews', {
  workflowId: p.string().primary(),
  workspaceId: p.string(),
  externalId: p.string(),
  candidateVersionId: p.string(),
  branch: p.string(),
  headSha: p.string(),
  prNumber: p.integer(),
  prUrl: p.string().nullable(),
  ...timestamps(),
});
/** The latest review of a workflow: the candidate it proposed and its pull request. */
export type WorkflowReview = InferEntity<typeof WorkflowReviewSchema>;
