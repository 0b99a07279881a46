import path from 'node:path';
import fs from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  WorkflowReviewSchema,
  WorkspaceRepositorySchema,
  type Workflow,
  type WorkflowReview,
  type WorkspaceRepository,
} from '../../db/entities';
import { recordAudit, recordWorkspaceAudit } from '../kernel/audit';
import {
  assertCredentialDestination,
  credentialKeyring,
  CredentialUseError,
  loadCredential,
  openCredential,
  type CredentialKeySettings,
} from '../credentials';
import { conflict, invalidInput, notFound, unavailable } from '../kernel/errors';
import { httpRequest } from '../kernel/outbound';
import type { WorkspacePrincipal } from '../kernel/principal';
import { artifactFileName, checkArtifactText, stableStringify, toArtifact } from '../workflows/artifact';
import { candidateVersionId } from '../workflows/graph';
import { loadWorkflow, viewOf } from '../workflows/views';
import { commitFileOnBranch, readFileAt, resolveRef } from './git';
import { gitAuthorization, GitRemoteError, listRemoteBranches, withRemoteCopy, type GitRemote } from './remote';

/**
 * The workspace repository: review writes a workflow's draft as an artifact on a review branch
 * and opens a pull request (GitHub REST pulls API at the `repo` credential's baseUrl); deploy,
 * while a repository is configured, needs the reviewed candidate merged; sync-from-repo reads
 * the merged artifact back. A repository is a smart-HTTP Git remote (fetched into a temporary
 * copy and pushed to through the guarded outbound client, authenticated with the `repo`
 * credential: HTTP Basic with its username, else a bearer token) or a bare Git repository
 * inside WORKFLOW_REPOSITORY_ROOT, both written with isomorphic-git.
 */
export interface RepositoryDeps {
  root: string | undefined;
  credentialKeys: CredentialKeySettings;
  allowPrivateNetworks: boolean;
}

export interface RepositoryInput {
  /** Exactly one of localPath and remoteUrl. */
  localPath?: string;
  remoteUrl?: string;
  branch: string;
  pathPrefix?: string;
  credentialId: string;
  pullsRepo: string;
}

const view = (r: WorkspaceRepository) => ({
  localPath: r.localPath ?? null,
  remoteUrl: r.remoteUrl ?? null,
  branch: r.branch,
  pathPrefix: r.pathPrefix,
  credentialId: r.credentialId,
  pullsRepo: r.pullsRepo,
  updatedAt: r.updatedAt,
});

function gitdirOf(deps: RepositoryDeps, localPath: string): string {
  if (!deps.root) throw invalidInput('Local repositories are not enabled on this deployment (WORKFLOW_REPOSITORY_ROOT is unset).');
  const resolved = path.resolve(deps.root, localPath);
  if (resolved !== path.resolve(deps.root) && !resolved.startsWith(path.resolve(deps.root) + path.sep))
    throw invalidInput('localPath must be inside WORKFLOW_REPOSITORY_ROOT.');
  return resolved;
}

export async function getRepository(em: EntityManager, principal: WorkspacePrincipal) {
  const repo = await em.findOne(WorkspaceRepositorySchema, { workspaceId: principal.workspaceId });
  return repo ? view(repo) : null;
}

export async function setRepository(em: EntityManager, deps: RepositoryDeps, principal: WorkspacePrincipal, input: RepositoryInput) {
  if ((input.localPath === undefined) === (input.remoteUrl === undefined))
    throw invalidInput('Send exactly one of localPath (a bare repository) and remoteUrl (a smart-HTTP Git remote).');
  const cred = await loadCredential(em, principal.workspaceId, input.credentialId).catch(() => null);
  if (!cred || cred.type !== 'repo') throw invalidInput('credentialId must name a repo credential of this workspace.');
  if (input.localPath !== undefined) {
    const gitdir = gitdirOf(deps, input.localPath);
    await fs.access(path.join(gitdir, 'HEAD')).catch(() => {
      throw invalidInput('localPath is not a bare Git repository.');
    });
    if (!(await resolveRef(gitdir, input.branch))) throw invalidInput(`Branch "${input.branch}" does not exist in the repository.`);
  } else {
    const url = remoteUrlOf(input.remoteUrl!);
    const branches = await listRemoteBranches(boundRemote(deps, url, cred, 'setup')).catch((err) => {
      throw remoteFailure(err, 'setup');
    });
    if (!branches.has(input.branch)) throw invalidInput(`Branch "${input.branch}" does not exist in the repository.`);
  }
  const pathPrefix = (input.pathPrefix ?? '').replace(/^\/+|\/+$/g, '');
  if (pathPrefix.split('/').some((p) => p === '..' || p === '.')) throw invalidInput('pathPrefix must not contain "." or ".." segments.');
  const data = {
    workspaceId: principal.workspaceId,
    localPath: input.localPath ?? null,
    remoteUrl: input.remoteUrl === undefined ? null : remoteUrlOf(input.remoteUrl),
    branch: input.branch,
    pathPrefix,
    credentialId: cred.id,
    pullsRepo: input.pullsRepo,
    updatedAt: new Date(),
  };
  await em.upsert(WorkspaceRepositorySchema, data);
  recordWorkspaceAudit(em, principal, 'workspace.repository.set', 'info');
  await em.flush();
  return view(data);
}

/** A remote URL: http or https, without user info (credentials come from the `repo` credential). */
function remoteUrlOf(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidInput('remoteUrl must be an http or https URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidInput('remoteUrl must be an http or https URL.');
  if (url.username || url.password) throw invalidInput('remoteUrl must not carry credentials; the repo credential authenticates.');
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}

function openRepoCredential(
  deps: RepositoryDeps,
  cred: Parameters<typeof openCredential>[1],
): { token?: unknown; username?: unknown; baseUrl?: unknown } {
  const ring = credentialKeyring(deps.credentialKeys);
  if (!ring) throw unavailable('Credentials are unavailable: neither CREDENTIALS_KEY nor SECRET_KEY is configured.');
  return openCredential(ring, cred);
}

/**
 * The remote at `url` authenticated with the repo credential, which must be bound to the
 * remote's host (its allowedHosts, or its baseUrl host): an Admin who cannot read the token
 * cannot point it at another server. Refused before any connection: 400 at setup, 409 later.
 */
function boundRemote(deps: RepositoryDeps, url: string, cred: Parameters<typeof openCredential>[1], phase: 'setup' | 'use'): GitRemote {
  const value = openRepoCredential(deps, cred);
  try {
    assertCredentialDestination(cred, value, url);
  } catch (err) {
    if (!(err instanceof CredentialUseError)) throw err;
    throw phase === 'setup'
      ? invalidInput(err.message, { details: { reason: 'credential_destination' } })
      : conflict(err.message, { details: { reason: 'credential_destination' } });
  }
  return { url, authorization: gitAuthorization(value), allowPrivateNetworks: deps.allowPrivateNetworks };
}

/** A Git remote failure as the API's error: at setup a bad configuration (400); later 409 (refused) or 503 (unreachable). */
function remoteFailure(err: unknown, phase: 'setup' | 'use'): unknown {
  if (!(err instanceof GitRemoteError)) return err;
  if (phase === 'setup') return invalidInput(err.message, { details: { reason: err.kind } });
  if (err.kind === 'unreachable') return unavailable(err.message, { details: { reason: err.kind } });
  return conflict(err.message, { details: { reason: err.kind } });
}

/**
 * Runs `work` on the repository's Git directory with `branches` present: the local bare
 * repository itself, or a temporary copy fetched from the remote (whose `push` sends a branch
 * back; a no-op locally, where commits land in place).
 */
async function withGit<T>(
  em: EntityManager,
  deps: RepositoryDeps,
  repo: WorkspaceRepository,
  branches: string[],
  work: (gitdir: string, push: (branch: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  if (!repo.remoteUrl) return work(gitdirOf(deps, repo.localPath ?? ''), async () => undefined);
  const cred = await loadCredential(em, repo.workspaceId, repo.credentialId);
  try {
    return await withRemoteCopy(boundRemote(deps, repo.remoteUrl, cred, 'use'), branches, work);
  } catch (err) {
    throw remoteFailure(err, 'use');
  }
}

export async function deleteRepository(em: EntityManager, principal: WorkspacePrincipal): Promise<void> {
  const n = await em.nativeDelete(WorkspaceRepositorySchema, { workspaceId: principal.workspaceId });
  if (n === 0) throw notFound('No repository is configured.');
  recordWorkspaceAudit(em, principal, 'workspace.repository.delete', 'warning');
  await em.flush();
}

async function requireRepository(em: EntityManager, workspaceId: string): Promise<WorkspaceRepository> {
  const repo = await em.findOne(WorkspaceRepositorySchema, { workspaceId });
  if (!repo) throw conflict('No repository is configured for this workspace.', { code: 'SETUP_REQUIRED' });
  return repo;
}

async function pulls(
  em: EntityManager,
  deps: RepositoryDeps,
  repo: WorkspaceRepository,
  method: string,
  suffix: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const cred = await loadCredential(em, repo.workspaceId, repo.credentialId);
  const value = openRepoCredential(deps, cred) as { token: string; baseUrl?: string };
  if (!value.baseUrl) throw unavailable('The repo credential has no baseUrl for the pulls API.');
  const res = await httpRequest(
    {
      method,
      url: `${value.baseUrl.replace(/\/+$/, '')}/repos/${repo.pullsRepo}/pulls${suffix}`,
      headers: { Authorization: `Bearer ${value.token}`, Accept: 'application/vnd.github+json' },
      body,
    },
    { allowPrivateNetworks: deps.allowPrivateNetworks },
  );
  if (res.status >= 300) throw unavailable(`The pulls API answered ${res.status}.`, { details: { status: res.status } });
  return res.body as Record<string, unknown>;
}

const filePath = (repo: WorkspaceRepository, externalId: string) =>
  [repo.pathPrefix, artifactFileName(externalId)].filter(Boolean).join('/');

export type ReviewStatus = 'open' | 'merged' | 'closed';

async function prStatus(
  em: EntityManager,
  deps: RepositoryDeps,
  repo: WorkspaceRepository,
  review: WorkflowReview,
): Promise<{ status: ReviewStatus; mergeCommitSha: string | null }> {
  const pr = await pulls(em, deps, repo, 'GET', `/${review.prNumber}`);
  const status: ReviewStatus = pr.merged === true || pr.merged_at ? 'merged' : pr.state === 'open' ? 'open' : 'closed';
  return { status, mergeCommitSha: typeof pr.merge_commit_sha === 'string' ? pr.merge_commit_sha : null };
}

/** The reviewed candidate as merged on the base branch: null when the file is missing or differs. */
async function mergedCandidate(
  em: EntityManager,
  deps: RepositoryDeps,
  repo: WorkspaceRepository,
  externalId: string,
): Promise<string | null> {
  const file = await withGit(em, deps, repo, [repo.branch], (gitdir) => readFileAt(gitdir, repo.branch, filePath(repo, externalId)));
  if (!file) return null;
  const check = checkArtifactText(file.text);
  return check.ok ? candidateVersionId(check.artifact) : null;
}

async function reviewView(em: EntityManager, deps: RepositoryDeps, repo: WorkspaceRepository, wf: Workflow, review: WorkflowReview) {
  const { status, mergeCommitSha } = await prStatus(em, deps, repo, review);
  const merged = status === 'merged' ? await mergedCandidate(em, deps, repo, review.externalId) : null;
  const current = candidateVersionId(wf);
  return {
    workflowId: wf.id,
    externalId: review.externalId,
    status,
    branch: review.branch,
    baseBranch: repo.branch,
    headSha: review.headSha,
    mergeCommitSha,
    pullRequest: { number: review.prNumber, url: review.prUrl },
    reviewedCandidateVersionId: review.candidateVersionId,
    candidateVersionId: current,
    candidateChanged: current !== review.candidateVersionId,
    synced: status === 'merged' && merged === review.candidateVersionId && current === review.candidateVersionId,
  };
}

/** GET review: the latest review of the workflow, or `{ review: null }`. */
export async function getReview(em: EntityManager, deps: RepositoryDeps, principal: WorkspacePrincipal, workflowId: string) {
  const wf = await loadWorkflow(em, principal, workflowId);
  const repo = await requireRepository(em, principal.workspaceId);
  const review = await em.findOne(WorkflowReviewSchema, { workflowId: wf.id });
  return { review: review ? await reviewView(em, deps, repo, wf, review) : null };
}

/**
 * POST review: writes the draft's artifact on `review/<externalId>` (started from the base
 * branch), then opens a pull request, or reuses the open one. With `expectedHeadSha` the
 * review must be open with that head (409 otherwise).
 */
export async function requestReview(
  em: EntityManager,
  deps: RepositoryDeps,
  principal: WorkspacePrincipal,
  workflowId: string,
  input: { expectedHeadSha?: string },
) {
  const wf = await loadWorkflow(em, principal, workflowId, { includeTrashed: false });
  return reviewGraph(em, deps, principal, wf, wf, input);
}

/** Whether the workspace has a repository (reviews possible) — destinations ask before reviewing. */
export async function hasRepository(em: EntityManager, workspaceId: string): Promise<boolean> {
  return (await em.count(WorkspaceRepositorySchema, { workspaceId })) > 0;
}

/**
 * Reviews `source` (the workflow's draft, or a destination's candidate version) as the
 * workflow's artifact: the review branch is (re)written from the base branch, the open pull
 * request is reused or a new one opened, and the reviewed candidate is recorded.
 */
export async function reviewGraph(
  em: EntityManager,
  deps: RepositoryDeps,
  principal: WorkspacePrincipal,
  wf: Workflow,
  source: Pick<Workflow, 'name' | 'description' | 'nodes' | 'edges'>,
  input: { expectedHeadSha?: string },
) {
  const repo = await requireRepository(em, principal.workspaceId);
  const existing = await em.findOne(WorkflowReviewSchema, { workflowId: wf.id });
  const status = existing ? (await prStatus(em, deps, repo, existing)).status : null;
  if (input.expectedHeadSha !== undefined && (!existing || status !== 'open'))
    throw conflict(`The review is not open (status ${status ?? 'none'}).`, { details: { status } });
  if (!wf.externalId) wf.externalId = wf.id;
  const externalId = wf.externalId;
  const branch = `review/${externalId}`;
  const reviewed = candidateVersionId(source);
  const text = stableStringify(toArtifact(source, externalId));
  const headSha = await withGit(em, deps, repo, [repo.branch, branch], async (gitdir, push) => {
    if (input.expectedHeadSha !== undefined) {
      const head = await resolveRef(gitdir, existing!.branch);
      if (head !== input.expectedHeadSha)
        throw conflict('The review branch moved since expectedHeadSha was read.', { details: { headSha: head } });
    }
    const sha = await commitFileOnBranch(
      gitdir,
      repo.branch,
      branch,
      filePath(repo, externalId),
      text,
      `Review ${source.name} (${reviewed})`,
    );
    await push(branch);
    return sha;
  });
  let prNumber = existing?.prNumber;
  let prUrl = existing?.prUrl ?? null;
  if (!existing || status !== 'open') {
    const pr = await pulls(em, deps, repo, 'POST', '', {
      title: `Workflow: ${source.name}`,
      head: branch,
      base: repo.branch,
      body: `Candidate ${reviewed} of workflow ${wf.id}.`,
    });
    prNumber = Number(pr.number);
    prUrl = typeof pr.html_url === 'string' ? pr.html_url : null;
  }
  const now = new Date();
  await em.upsert(WorkflowReviewSchema, {
    workflowId: wf.id,
    workspaceId: wf.workspaceId,
    externalId,
    candidateVersionId: reviewed,
    branch,
    headSha,
    prNumber: prNumber!,
    prUrl,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  });
  recordAudit(em, principal, {
    action: 'workflow.review.request',
    severity: 'info',
    workspaceId: wf.workspaceId,
    targetType: 'workflow',
    targetId: wf.id,
    metadata: { prNumber, headSha },
  });
  await em.flush();
  const review = await em.findOneOrFail(WorkflowReviewSchema, { workflowId: wf.id }, { refresh: true });
  return { review: await reviewView(em, deps, repo, wf, review) };
}

/**
 * The deploy rule while a repository is configured: the draft must be the reviewed candidate
 * (`workflow_candidate_changed`), its review merged (`workflow_review_not_synced`), and the
 * merged artifact still the reviewed one (`workflow_reviewed_version_unavailable`).
 */
export async function assertReviewSynced(em: EntityManager, deps: RepositoryDeps | undefined, wf: Workflow): Promise<void> {
  const repo = await em.findOne(WorkspaceRepositorySchema, { workspaceId: wf.workspaceId });
  if (!repo) return;
  const review = await em.findOne(WorkflowReviewSchema, { workflowId: wf.id });
  if (!review)
    throw conflict('A repository is configured: request a review of this workflow and merge it before deploying.', {
      code: 'workflow_review_not_synced',
    });
  if (review.candidateVersionId !== candidateVersionId(wf)) {
    throw conflict('The draft changed after it was reviewed; request a new review.', {
      code: 'workflow_candidate_changed',
      details: { reviewedCandidateVersionId: review.candidateVersionId, candidateVersionId: candidateVersionId(wf) },
    });
  }
  if (!deps) throw unavailable('Repository checks are unavailable here.');
  const { status } = await prStatus(em, deps, repo, review);
  if (status !== 'merged')
    throw conflict(`The review is ${status}, not merged; merge it before deploying.`, {
      code: 'workflow_review_not_synced',
      details: { status, pullRequest: review.prNumber },
    });
  if ((await mergedCandidate(em, deps, repo, review.externalId)) !== review.candidateVersionId) {
    throw conflict('The reviewed version is no longer on the base branch; request a new review.', {
      code: 'workflow_reviewed_version_unavailable',
    });
  }
}

async function readMerged(
  em: EntityManager,
  deps: RepositoryDeps,
  principal: WorkspacePrincipal,
  workflowId: string,
  ref: string | undefined,
) {
  const wf = await loadWorkflow(em, principal, workflowId, { includeTrashed: false });
  const repo = await requireRepository(em, principal.workspaceId);
  const externalId = wf.externalId ?? wf.id;
  const at = ref ?? repo.branch;
  const file = await withGit(em, deps, repo, [at, repo.branch], (gitdir) => readFileAt(gitdir, at, filePath(repo, externalId)));
  if (!file) throw notFound(`No artifact for "${externalId}" at ${ref ?? repo.branch}.`);
  const check = checkArtifactText(file.text);
  if (!check.ok) throw invalidInput('The artifact in the repository is invalid.', { details: { errors: check.errors } });
  return { wf, commit: file.commit, ref: ref ?? repo.branch, check };
}

/** GET sync-from-repo: the artifact at `ref` (default: the base branch) against the draft. */
export async function previewSync(
  em: EntityManager,
  deps: RepositoryDeps,
  principal: WorkspacePrincipal,
  workflowId: string,
  ref?: string,
) {
  const { wf, commit, ref: at, check } = await readMerged(em, deps, principal, workflowId, ref);
  const artifact = check.artifact;
  const repoCandidate = candidateVersionId(artifact);
  return {
    ref: at,
    commit,
    externalId: artifact.externalId,
    artifact: { name: artifact.name, description: artifact.description, nodes: artifact.nodes, edges: artifact.edges },
    draft: { name: wf.name, description: wf.description, candidateVersionId: candidateVersionId(wf) },
    repositoryCandidateVersionId: repoCandidate,
    changed: repoCandidate !== candidateVersionId(wf) || artifact.name !== wf.name || artifact.description !== wf.description,
    importReadiness: check.validation,
    persisted: false as const,
  };
}

/** POST sync-from-repo: the artifact at `ref` becomes the draft (status and active version kept). */
export async function importSync(em: EntityManager, deps: RepositoryDeps, principal: WorkspacePrincipal, workflowId: string, ref?: string) {
  const { wf, commit, ref: at, check } = await readMerged(em, deps, principal, workflowId, ref);
  wf.name = check.artifact.name;
  wf.description = check.artifact.description;
  wf.nodes = check.artifact.nodes;
  wf.edges = check.artifact.edges;
  wf.externalId ??= check.artifact.externalId;
  wf.updatedAt = new Date();
  recordAudit(em, principal, {
    action: 'workflow.sync_from_repo',
    severity: 'info',
    workspaceId: wf.workspaceId,
    targetType: 'workflow',
    targetId: wf.id,
    metadata: { ref: at, commit },
  });
  await em.flush();
  return { workflow: await viewOf(em, wf), ref: at, commit, importReadiness: check.validation };
}
