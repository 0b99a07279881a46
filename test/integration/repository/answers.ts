/**
 * The answers of the repository routes as these tests read them. `api/routes/repository.ts`
 * declares the repository and review schemas inside the route file without exporting them, so
 * their shapes are written out here (keep them in step); the rest comes from `api/schemas`.
 */
import type { z } from 'zod';
import type { validationResultSchema, workflowSchema } from '../../../api/schemas/workflows';
import type { DeployResult, Refusable, TestClient } from '../../kit';

export type { Refusable };

export interface Repository {
  localPath: string | null;
  remoteUrl: string | null;
  branch: string;
  pathPrefix: string;
  credentialId: string;
  pullsRepo: string;
  updatedAt: string;
}
export type RepositoryAnswer = Refusable<{ repository: Repository | null }>;

export interface Review {
  workflowId: string;
  externalId: string;
  status: 'open' | 'merged' | 'closed';
  branch: string;
  baseBranch: string;
  headSha: string;
  mergeCommitSha: string | null;
  pullRequest: { number: number; url: string | null };
  reviewedCandidateVersionId: string;
  candidateVersionId: string;
  candidateChanged: boolean;
  synced: boolean;
}
export type ReviewAnswer = Refusable<{ review: Review }>;

/** GET sync-from-repo: the artifact at a ref against the draft. */
export type SyncPreview = Refusable<{
  ref: string;
  commit: string;
  externalId: string;
  artifact: { name: string; description: string; nodes: object[]; edges: object[] };
  changed: boolean;
  persisted: false;
}>;
/** POST sync-from-repo: the imported draft. */
export type SyncImport = Refusable<{
  workflow: z.infer<typeof workflowSchema>;
  ref: string;
  commit: string;
  importReadiness: z.infer<typeof validationResultSchema>;
}>;

/** POST /workflows/{id}/deploy as `api`, typed with its refusal (the review blocks are 409s with a code). */
export const deploy = (api: TestClient, id: string) => api.post<Refusable<DeployResult>>(`/api/v1/workflows/${id}/deploy`);
