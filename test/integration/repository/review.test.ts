/**
 * Workspace repository, review and sync-from-repo over real HTTP and PostgreSQL, a real bare
 * Git repository on disk (written by the service with isomorphic-git, inspected and changed by
 * the test with the git CLI) and a loopback pulls API: configuration rules, review branches
 * and pull requests, expectedHeadSha conflicts, the deploy blocks (not synced, candidate
 * changed, reviewed version unavailable), previews and imports from the repository, and
 * isolation from another workspace.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowSchema } from '../../../db/entities';
import { startPullsApi } from '../../fakes/pullsApi';
import { change, production } from '../destinations/helpers';
import { addUserWithKey, createWorkspace, nodesOf, useTestStack, type CredentialEnvelope, type WorkspaceFixture } from '../../kit';
import { deploy, type Refusable, type RepositoryAnswer, type ReviewAnswer, type SyncImport, type SyncPreview } from './answers';

const TOKEN = 'ghp_fake_repo_token_0123456789';
let a: WorkspaceFixture;
let b: WorkspaceFixture;
let root: string;
let bare: string;
let work: string;
let pullsApi: Awaited<ReturnType<typeof startPullsApi>>;
let credentialId: string;

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.test', ...args], { cwd, encoding: 'utf8' }).trim();
const bareGit = (...args: string[]) => execFileSync('git', ['--git-dir', bare, ...args], { encoding: 'utf8' }).trim();

const stack = useTestStack(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'svc-repos-'));
  bare = path.join(root, 'team.git');
  execFileSync('git', ['init', '--bare', '-q', '-b', 'main', bare]);
  work = path.join(root, 'work');
  execFileSync('git', ['clone', '-q', bare, work]);
  writeFileSync(path.join(work, 'README.md'), '# flows\n');
  gitIn(work, 'add', 'README.md');
  gitIn(work, 'commit', '-q', '-m', 'init');
  gitIn(work, 'push', '-q', 'origin', 'HEAD:main');
  pullsApi = await startPullsApi(TOKEN);
  return { config: { workflowRepositoryRoot: root, outboundAllowPrivateNetworks: true }, worker: false, workspaceName: 'Repo A' };
});
beforeAll(async () => {
  a = stack.ws;
  b = await createWorkspace(stack.app, 'Repo B');
  const cred = await stack.api.post<CredentialEnvelope>('/api/v1/credentials', {
    name: 'Git host',
    type: 'repo',
    value: { token: TOKEN, baseUrl: pullsApi.url },
  });
  expect(cred.status).toBe(201);
  credentialId = cred.body.credential.id;
});
afterAll(async () => {
  await pullsApi?.close();
  rmSync(root, { recursive: true, force: true });
});

const REPO = '/api/v1/workflow-repository';
const graph = (tag: string) => ({
  nodes: [
    { id: 'start', type: 'start', name: 'Start', config: {}, position: { x: 0, y: 0 } },
    { id: 'shape', type: 'transform', name: 'Shape', config: { expression: `{ "tag": "${tag}" }` }, position: { x: 200, y: 0 } },
  ],
  edges: [{ id: 'e1', source: 'start', target: 'shape' }],
});
const repoBody = (over: Record<string, unknown> = {}) => ({
  localPath: 'team.git',
  branch: 'main',
  pathPrefix: 'flows',
  credentialId,
  pullsRepo: 'acme/flows',
  ...over,
});

/** Merges the pull request the way the host would: fast-forwards the base branch to its head. */
function merge(prNumber: number) {
  const pull = pullsApi.pulls.find((p) => p.number === prNumber)!;
  const head = bareGit('rev-parse', `refs/heads/${pull.head}`);
  bareGit('update-ref', `refs/heads/${pull.base}`, head);
  Object.assign(pull, { state: 'closed', merged: true, merge_commit_sha: head });
}

let wfId: string;

test('before a repository is configured: deploys are not blocked, review is 409 SETUP_REQUIRED', async () => {
  const created = await stack.api.workflows.create({ name: 'Reviewed flow', ...graph('one') });
  wfId = created.body.workflow.id;
  expect((await deploy(stack.api, wfId)).status).toBe(200);
  const review = await stack.api.get<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`);
  expect(review.status).toBe(409);
  expect(review.body.code).toBe('SETUP_REQUIRED');
});

test('configuring the repository: Admin or Owner, inside the root, a repo credential, an existing branch', async () => {
  const member = await addUserWithKey(stack.app, a, 'member');
  expect((await stack.as(member.token).put<RepositoryAnswer>(REPO, repoBody())).status).toBe(403);
  const outside = await stack.api.put<RepositoryAnswer>(REPO, repoBody({ localPath: '../etc' }));
  expect(outside.status).toBe(400);
  expect(outside.body.error).toBe('localPath must be inside WORKFLOW_REPOSITORY_ROOT.');
  expect((await stack.api.put<RepositoryAnswer>(REPO, repoBody({ branch: 'nope' }))).body.error).toBe(
    'Branch "nope" does not exist in the repository.',
  );
  expect((await stack.as(b.token).put<RepositoryAnswer>(REPO, repoBody())).body.error).toBe(
    'credentialId must name a repo credential of this workspace.',
  );
  const ok = await stack.api.put<RepositoryAnswer>(REPO, repoBody());
  expect(ok.status).toBe(200);
  expect(ok.body.repository).toMatchObject({ localPath: 'team.git', branch: 'main', pathPrefix: 'flows', pullsRepo: 'acme/flows' });
  expect((await stack.api.get<RepositoryAnswer>(REPO)).body.repository?.credentialId).toBe(credentialId);
  expect((await stack.as(b.token).get<RepositoryAnswer>(REPO)).body.repository).toBeNull();
  const inUse = await stack.api.delete<Refusable<object>>(`/api/v1/credentials/${credentialId}`);
  expect(inUse.status).toBe(409);
  expect(inUse.body.error).toBe('This credential is used by the workflow repository; change or remove the repository setting first.');
});

test('deploy needs a review; review writes the artifact and opens a pull request; merge unblocks deploy', async () => {
  const blocked = await deploy(stack.api, wfId);
  expect(blocked.status).toBe(409);
  expect(blocked.body.code).toBe('workflow_review_not_synced');

  const res = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, {});
  expect(res.status).toBe(200);
  const review = res.body.review;
  expect(review).toMatchObject({
    externalId: wfId,
    status: 'open',
    branch: `review/${wfId}`,
    baseBranch: 'main',
    synced: false,
    candidateChanged: false,
    pullRequest: { number: 1 },
  });
  expect(review.headSha).toBe(bareGit('rev-parse', `refs/heads/review/${wfId}`));
  const text = bareGit('show', `review/${wfId}:flows/${wfId}.workflow.json`);
  const artifact = JSON.parse(text);
  expect(artifact).toMatchObject({ schema: 'workflow-artifact.v1', externalId: wfId, name: 'Reviewed flow', connections: {} });
  expect(Object.keys(artifact)).toEqual([...Object.keys(artifact)].sort());
  expect(pullsApi.pulls[0]).toMatchObject({ head: `review/${wfId}`, base: 'main', state: 'open' });

  expect((await deploy(stack.api, wfId)).body.code).toBe('workflow_review_not_synced');

  // expectedHeadSha: a wrong head is a conflict; the right one moves the branch, same pull request.
  const wrong = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, { expectedHeadSha: '0'.repeat(40) });
  expect(wrong.status).toBe(409);
  const again = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, { expectedHeadSha: review.headSha });
  expect(again.status).toBe(200);
  expect(again.body.review.pullRequest.number).toBe(1);
  expect(pullsApi.pulls).toHaveLength(1);

  merge(1);
  const status = await stack.api.get<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`);
  expect(status.body.review).toMatchObject({ status: 'merged', synced: true });
  const closed = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, { expectedHeadSha: again.body.review.headSha });
  expect(closed.status).toBe(409);
  expect(closed.body.error).toBe('The review is not open (status merged).');
  expect((await deploy(stack.api, wfId)).status).toBe(200);
});

test('a changed draft blocks with workflow_candidate_changed; a reviewed artifact gone from main blocks with workflow_reviewed_version_unavailable', async () => {
  expect((await stack.api.patch(`/api/v1/workflows/${wfId}`, graph('two'))).status).toBe(200);
  const changed = await deploy(stack.api, wfId);
  expect(changed.status).toBe(409);
  expect(changed.body.code).toBe('workflow_candidate_changed');

  const review = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, {});
  expect(review.body.review.pullRequest.number).toBe(2);
  merge(2);
  gitIn(work, 'pull', '-q', 'origin', 'main');
  unlinkSync(path.join(work, 'flows', `${wfId}.workflow.json`));
  gitIn(work, 'commit', '-q', '-am', 'remove flow');
  gitIn(work, 'push', '-q', 'origin', 'HEAD:main');
  const gone = await deploy(stack.api, wfId);
  expect(gone.status).toBe(409);
  expect(gone.body.code).toBe('workflow_reviewed_version_unavailable');
});

test('sync-from-repo previews the artifact at a ref and imports it (Admin or Owner)', async () => {
  const reviewedSha = pullsApi.pulls[1].merge_commit_sha!;
  const atMain = await stack.api.get<SyncPreview>(`/api/v1/workflows/${wfId}/sync-from-repo`);
  expect(atMain.status).toBe(404);

  // Someone edits the artifact on a branch; preview it against the draft by ref.
  gitIn(work, 'checkout', '-q', '-b', 'edit', reviewedSha);
  const file = path.join(work, 'flows', `${wfId}.workflow.json`);
  const artifact = JSON.parse(readFileSync(file, 'utf8'));
  artifact.name = 'Renamed in git';
  artifact.nodes[1].config.expression = '{ "tag": "from-git" }';
  writeFileSync(file, JSON.stringify(artifact, null, 2));
  gitIn(work, 'commit', '-q', '-am', 'edit flow');
  gitIn(work, 'push', '-q', 'origin', 'edit');

  const preview = await stack.api.get<SyncPreview>(`/api/v1/workflows/${wfId}/sync-from-repo?ref=edit`);
  expect(preview.status).toBe(200);
  expect(preview.body).toMatchObject({
    ref: 'edit',
    externalId: wfId,
    changed: true,
    persisted: false,
    artifact: { name: 'Renamed in git' },
  });
  expect(preview.body.commit).toBe(bareGit('rev-parse', 'refs/heads/edit'));
  const unchanged = await stack.app.orm.em.fork().findOneOrFail(WorkflowSchema, { id: wfId });
  expect(unchanged.name).toBe('Reviewed flow');

  const member = await addUserWithKey(stack.app, a, 'member');
  expect((await stack.as(member.token).post<SyncImport>(`/api/v1/workflows/${wfId}/sync-from-repo`, { ref: 'edit' })).status).toBe(403);
  const imported = await stack.api.post<SyncImport>(`/api/v1/workflows/${wfId}/sync-from-repo`, { ref: 'edit' });
  expect(imported.status).toBe(200);
  expect(imported.body.workflow.name).toBe('Renamed in git');
  expect(nodesOf(imported.body.workflow)[1].config?.expression).toBe('{ "tag": "from-git" }');
  expect(imported.body.importReadiness.deploymentReadiness.ready).toBe(true);
});

test('the destinations action request-git-review reviews the destination candidate once a repository is configured', async () => {
  const created = await stack.api.workflows.create({ name: 'Destination flow', ...graph('dest') });
  const id = created.body.workflow.id;
  const prepared = await change(stack.app, a.token, id, { action: 'prepare-production' });
  expect(prepared.status).toBe(200);
  const prod = await production(stack.app, a.token, id);
  const res = await change(stack.app, a.token, id, {
    action: 'request-git-review',
    targetId: prod.targetId,
    expectedRevision: prod.revision,
  });
  expect(res.status).toBe(200);
  const receipt = res.body.receipt;
  expect(receipt).toMatchObject({ action: 'request-git-review', versionId: prepared.body.receipt.versionId });
  expect(receipt.reviewHeadSha).toBe(bareGit('rev-parse', `refs/heads/review/${id}`));
  expect(pullsApi.pulls.find((p) => p.number === receipt.pullRequestNumber)).toMatchObject({ head: `review/${id}`, state: 'open' });
  expect(JSON.parse(bareGit('show', `review/${id}:flows/${id}.workflow.json`)).nodes[1].config.expression).toBe('{ "tag": "dest" }');
  const review = await stack.api.get<ReviewAnswer>(`/api/v1/workflows/${id}/review`);
  expect(review.body.review).toMatchObject({ status: 'open', candidateChanged: false, synced: false });
});

test("another workspace's key cannot read or act on the workflow's review or sync (nothing changes)", async () => {
  const before = bareGit('for-each-ref', '--format=%(refname) %(objectname)');
  for (const [method, p] of [
    ['GET', 'review'],
    ['POST', 'review'],
    ['GET', 'sync-from-repo'],
    ['POST', 'sync-from-repo'],
  ] as const) {
    const res = await stack.as(b.token).request<Refusable<object>>(method, `/api/v1/workflows/${wfId}/${p}`, {
      body: method === 'POST' ? {} : undefined,
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('API key cannot access this workflow');
  }
  expect(bareGit('for-each-ref', '--format=%(refname) %(objectname)')).toBe(before);
  expect(pullsApi.pulls).toHaveLength(3);
  const removed = await stack.api.delete(REPO);
  expect(removed.status).toBe(200);
});
