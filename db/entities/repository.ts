import { EntitySchema } from '@mikro-orm/core';

/** A workspace's workflow repository: where review writes artifacts and sync reads them. */
export interface WorkspaceRepository {
  workspaceId: string;
  /** A bare Git repository inside WORKFLOW_REPOSITORY_ROOT; null when the repository is a remote. */
  localPath: string | null;
  /** A smart-HTTP Git remote (http or https); null for a local repository. */
  remoteUrl: string | null;
  branch: string;
  /** Folder of the artifacts inside the repository ('' for the root). */
  pathPrefix: string;
  /** The `repo` credential whose token and baseUrl reach the pulls API. */
  credentialId: string;
  /** `owner/name` on the pulls API. */
  pullsRepo: string;
  updatedAt: Date;
}

/** The latest review of a workflow: the candidate it proposed and its pull request. */
export interface WorkflowReview {
  workflowId: string;
  workspaceId: string;
  externalId: string;
  candidateVersionId: string;
  branch: string;
  headSha: string;
  prNumber: number;
  prUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const WorkspaceRepositorySchema = new EntitySchema<WorkspaceRepository>({
  name: 'WorkspaceRepository',
  tableName: 'workspace_repositories',
  properties: {
    workspaceId: { type: 'string', primary: true, fieldName: 'workspace_id' },
    localPath: { type: 'string', fieldName: 'local_path', nullable: true },
    remoteUrl: { type: 'string', fieldName: 'remote_url', nullable: true },
    branch: { type: 'string' },
    pathPrefix: { type: 'string', fieldName: 'path_prefix' },
    credentialId: { type: 'string', fieldName: 'credential_id' },
    pullsRepo: { type: 'string', fieldName: 'pulls_repo' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const WorkflowReviewSchema = new EntitySchema<WorkflowReview>({
  name: 'WorkflowReview',
  tableName: 'workflow_reviews',
  properties: {
    workflowId: { type: 'string', primary: true, fieldName: 'workflow_id' },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    externalId: { type: 'string', fieldName: 'external_id' },
    candidateVersionId: { type: 'string', fieldName: 'candidate_version_id' },
    branch: { type: 'string' },
    headSha: { type: 'string', fieldName: 'head_sha' },
    prNumber: { type: 'integer', fieldName: 'pr_number' },
    prUrl: { type: 'string', fieldName: 'pr_url', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
