/**
 * The workspace repository on a smart-HTTP Git remote: the real `git http-backend` behind a
 * loopback server with HTTP Basic and bearer authentication (test/fakes/gitHttp.ts), the
 * service speaking to it through isomorphic-git on the guarded outbound client. Review pushes
 * the artifact branch to the remote; deploy and sync-from-repo fetch from it; a person clones,
 * edits and pushes with the git CLI over the same HTTP server. Wrong credentials are refused,
 * another workspace changes nothing, and a private address is refused by the SSRF guard when
 * private networks are not allowed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGitHttpServer, type GitHttpServer } from '../../fakes/gitHttp';
import { startPullsApi } from '../../fakes/pullsApi';
import { startTestApp } from '../../support/harness';
import { client, createWorkspace, nodesOf, useTestStack, type CredentialEnvelope, type WorkspaceFixture } from '../../kit';
import { deploy, type Refusable, type RepositoryAnswer, type ReviewAnswer, type SyncImport, type SyncPreview } from './answers';

const ALICE_PASSWORD = 'alice-app-password-0123';
const BOB_TOKEN = 'bob-bearer-token-4567';
let a: WorkspaceFixture;
let b: WorkspaceFixture;
let root: string;
let bare: string;
let git: GitHttpServer;
let pullsA: Awaited<ReturnType<typeof startPullsApi>>;
let pullsB: Awaited<ReturnType<typeof startPullsApi>>;
let credA: string;
let credB: string;

const REPO = '/api/v1/workflow-repository';
const bareGit = (...args: string[]) => execFileSync('git', ['--git-dir', bare, ...args], { encoding: 'utf8' }).trim();
const refsOf = () => bareGit('for-each-ref', '--format=%(refname) %(objectname)');
const gitArgs = (args: string[]) => ['-c', 'user.name=Person', '-c', 'user.email=person@example.test', '-c', 'credential.helper=', ...args];
const gitEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
/** The git CLI on a local path (synchronous is fine: no server of this process is involved). */
const gitIn = (cwd: string, ...args: string[]) => execFileSync('git', gitArgs(args), { cwd, encoding: 'utf8', env: gitEnv }).trim();
/** The git CLI over HTTP: asynchronous, since the loopback Git server runs in this process. */
const gitHttp = async (cwd: string, ...args: string[]) =>
  (await promisify(execFile)('git', gitArgs(args), { cwd, encoding: 'utf8', env: gitEnv })).stdout.trim();
const graph = (tag: string) => ({
  nodes: [
    { id: 'start', type: 'start', name: 'Start', config: {}, position: { x: 0, y: 0 } },
    { id: 'shape', type: 'transform', name: 'Shape', config: { expression: `{ "tag": "${tag}" }` }, position: { x: 200, y: 0 } },
  ],
  edges: [{ id: 'e1', source: 'start', target: 'shape' }],
});
/** A repo credential bound to the Git host (issue 27: a credential goes only to the hosts it was made for). */
async function credential(
  ws: WorkspaceFixture,
  name: string,
  value: Record<string, unknown>,
  allowedHosts = [new URL(git.url).host],
): Promise<string> {
  const res = await stack.as(ws.token).post<CredentialEnvelope>('/api/v1/credentials', { name, type: 'repo', value, allowedHosts });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

const stack = useTestStack(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'svc-remote-'));
  bare = path.join(root, 'team.git');
  execFileSync('git', ['init', '--bare', '-q', '-b', 'main', bare]);
  const seed = path.join(root, 'seed');
  execFileSync('git', ['clone', '-q', bare, seed]);
  writeFileSync(path.join(seed, 'README.md'), '# flows\n');
  gitIn(seed, 'add', 'README.md');
  gitIn(seed, 'commit', '-q', '-m', 'init');
  gitIn(seed, 'push', '-q', 'origin', 'HEAD:main');
  git = await startGitHttpServer({ root, basic: { alice: ALICE_PASSWORD }, bearer: { [BOB_TOKEN]: 'bob' } });
  pullsA = await startPullsApi(ALICE_PASSWORD);
  pullsB = await startPullsApi(BOB_TOKEN);
  // No WORKFLOW_REPOSITORY_ROOT: remotes only.
  return { config: { workflowRepositoryRoot: undefined, outboundAllowPrivateNetworks: true }, worker: false, workspaceName: 'Remote A' };
});
beforeAll(async () => {
  a = stack.ws;
  b = await createWorkspace(stack.app, 'Remote B');
  credA = await credential(a, 'Git host (basic)', { username: 'alice', token: ALICE_PASSWORD, baseUrl: pullsA.url });
  credB = await credential(b, 'Git host (bearer)', { token: BOB_TOKEN, baseUrl: pullsB.url });
});
afterAll(async () => {
  await git?.close();
  await pullsA?.close();
  await pullsB?.close();
  rmSync(root, { recursive: true, force: true });
});

const remoteBody = (over: Record<string, unknown> = {}) => ({
  remoteUrl: `${git.url}/team.git`,
  branch: 'main',
  pathPrefix: 'flows',
  credentialId: credA,
  pullsRepo: 'acme/flows',
  ...over,
});
let wfId: string;

test('configuring a remote: its branches are read over smart HTTP with the credential; wrong credentials, unknown branches and bad URLs are refused', async () => {
  const wrongPassword = await credential(a, 'Wrong password', { username: 'alice', token: 'not-the-password', baseUrl: pullsA.url });
  const wrongToken = await credential(a, 'Wrong token', { token: 'nope-token', baseUrl: pullsA.url });
  for (const credentialId of [wrongPassword, wrongToken]) {
    const refused = await stack.api.put<RepositoryAnswer>(REPO, remoteBody({ credentialId }));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('The Git remote refused the credentials (HTTP 401).');
  }
  expect(git.requests.some((r) => r.user === null)).toBe(true);
  expect((await stack.api.put<RepositoryAnswer>(REPO, remoteBody({ branch: 'nope' }))).body.error).toBe(
    'Branch "nope" does not exist in the repository.',
  );
  expect((await stack.api.put<RepositoryAnswer>(REPO, remoteBody({ remoteUrl: 'ftp://example.test/x.git' }))).body.error).toBe(
    'remoteUrl must be an http or https URL.',
  );
  expect((await stack.api.put<RepositoryAnswer>(REPO, remoteBody({ remoteUrl: `http://alice:pw@127.0.0.1:1/x.git` }))).status).toBe(400);
  expect((await stack.api.put<RepositoryAnswer>(REPO, { ...remoteBody(), localPath: 'team.git' })).body.error).toBe(
    'Send exactly one of localPath (a bare repository) and remoteUrl (a smart-HTTP Git remote).',
  );
  expect((await stack.api.get<RepositoryAnswer>(REPO)).body.repository).toBeNull();

  const ok = await stack.api.put<RepositoryAnswer>(REPO, remoteBody());
  expect(ok.status).toBe(200);
  expect(ok.body.repository).toMatchObject({ remoteUrl: `${git.url}/team.git`, localPath: null, branch: 'main', pathPrefix: 'flows' });
  expect(git.requests.filter((r) => r.user === 'alice').length).toBeGreaterThan(0);
});

test('review pushes the artifact branch to the remote (Basic auth); merge on the remote unblocks deploy (fetched back)', async () => {
  const created = await stack.api.workflows.create({ name: 'Remote flow', ...graph('one') });
  wfId = created.body.workflow.id;
  expect((await deploy(stack.api, wfId)).body.code).toBe('workflow_review_not_synced');

  const pushesBefore = git.requests.filter((r) => r.path.endsWith('/git-receive-pack')).length;
  const res = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, {});
  expect(res.status).toBe(200);
  const review = res.body.review;
  expect(review).toMatchObject({ status: 'open', branch: `review/${wfId}`, baseBranch: 'main', pullRequest: { number: 1 } });
  expect(git.requests.filter((r) => r.path.endsWith('/git-receive-pack') && r.user === 'alice').length).toBe(pushesBefore + 1);
  // The pushed branch is on the remote, on top of main, with the artifact.
  expect(bareGit('rev-parse', `refs/heads/review/${wfId}`)).toBe(review.headSha);
  expect(bareGit('rev-parse', `${review.headSha}^`)).toBe(bareGit('rev-parse', 'refs/heads/main'));
  expect(JSON.parse(bareGit('show', `review/${wfId}:flows/${wfId}.workflow.json`))).toMatchObject({
    schema: 'workflow-artifact.v1',
    externalId: wfId,
    name: 'Remote flow',
  });

  // expectedHeadSha is checked against the remote's branch.
  const wrong = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, { expectedHeadSha: '0'.repeat(40) });
  expect(wrong.status).toBe(409);
  expect(wrong.body.error).toBe('The review branch moved since expectedHeadSha was read.');
  const again = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, { expectedHeadSha: review.headSha });
  expect(again.status).toBe(200);
  expect(bareGit('rev-parse', `refs/heads/review/${wfId}`)).toBe(again.body.review.headSha);

  expect((await deploy(stack.api, wfId)).body.code).toBe('workflow_review_not_synced');
  // The host merges: main moves to the review head on the remote.
  bareGit('update-ref', 'refs/heads/main', again.body.review.headSha);
  Object.assign(pullsA.pulls[0], { state: 'closed', merged: true, merge_commit_sha: again.body.review.headSha });
  expect((await stack.api.get<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`)).body.review).toMatchObject({
    status: 'merged',
    synced: true,
  });
  expect((await deploy(stack.api, wfId)).status).toBe(200);
});

test('the other way: a person clones over HTTP, edits the artifact and pushes a branch; sync-from-repo fetches, previews and imports it', async () => {
  const clone = path.join(root, 'person');
  const authed = `${git.url.replace('http://', 'http://alice:' + ALICE_PASSWORD + '@')}/team.git`;
  await gitHttp(root, 'clone', '-q', authed, clone);
  const file = path.join(clone, 'flows', `${wfId}.workflow.json`);
  const artifact = JSON.parse(readFileSync(file, 'utf8'));
  artifact.name = 'Edited over HTTP';
  artifact.nodes[1].config.expression = '{ "tag": "from-http" }';
  writeFileSync(file, JSON.stringify(artifact, null, 2));
  gitIn(clone, 'checkout', '-q', '-b', 'edit');
  gitIn(clone, 'commit', '-q', '-am', 'edit flow');
  await gitHttp(clone, 'push', '-q', 'origin', 'edit');
  const editSha = bareGit('rev-parse', 'refs/heads/edit');

  const preview = await stack.api.get<SyncPreview>(`/api/v1/workflows/${wfId}/sync-from-repo?ref=edit`);
  expect(preview.status).toBe(200);
  expect(preview.body).toMatchObject({
    ref: 'edit',
    commit: editSha,
    changed: true,
    persisted: false,
    artifact: { name: 'Edited over HTTP' },
  });
  const atMain = await stack.api.get<SyncPreview>(`/api/v1/workflows/${wfId}/sync-from-repo`);
  expect(atMain.body).toMatchObject({ ref: 'main', changed: false });

  const imported = await stack.api.post<SyncImport>(`/api/v1/workflows/${wfId}/sync-from-repo`, { ref: 'edit' });
  expect(imported.status).toBe(200);
  expect(imported.body.workflow).toMatchObject({ name: 'Edited over HTTP' });
  expect(nodesOf(imported.body.workflow)[1].config?.expression).toBe('{ "tag": "from-http" }');

  // The service's review of the imported draft lands on the remote, where the person fetches it.
  const review = await stack.api.post<ReviewAnswer>(`/api/v1/workflows/${wfId}/review`, {});
  expect(review.status).toBe(200);
  await gitHttp(clone, 'fetch', '-q', 'origin');
  expect(gitIn(clone, 'rev-parse', `origin/review/${wfId}`)).toBe(review.body.review.headSha);
  expect(JSON.parse(gitIn(clone, 'show', `origin/review/${wfId}:flows/${wfId}.workflow.json`)).nodes[1].config.expression).toBe(
    '{ "tag": "from-http" }',
  );
});

test('a bearer-token credential works too; with a revoked token the next use is refused (409) and nothing is pushed', async () => {
  const ok = await stack.as(b.token).put<RepositoryAnswer>(REPO, remoteBody({ credentialId: credB }));
  expect(ok.status).toBe(200);
  const created = await stack.as(b.token).workflows.create({ name: 'Bearer flow', ...graph('b') });
  const id = created.body.workflow.id;
  const review = await stack.as(b.token).post<ReviewAnswer>(`/api/v1/workflows/${id}/review`, {});
  expect(review.status).toBe(200);
  expect(bareGit('rev-parse', `refs/heads/review/${id}`)).toBe(review.body.review.headSha);
  expect(git.requests.some((r) => r.user === 'bob' && r.path.endsWith('/git-receive-pack'))).toBe(true);

  // The host revokes the token: the stored credential no longer opens the remote.
  const patched = await stack.as(b.token).patch(`/api/v1/credentials/${credB}`, {
    name: 'Git host (bearer)',
    type: 'repo',
    value: { token: 'revoked-token', baseUrl: pullsB.url },
  });
  expect(patched.status).toBe(200);
  const before = refsOf();
  const fresh = await stack.as(b.token).workflows.create({ name: 'Bearer flow 2', ...graph('b2') });
  const refused = await stack.as(b.token).post<ReviewAnswer>(`/api/v1/workflows/${fresh.body.workflow.id}/review`, {});
  expect(refused.status).toBe(409);
  expect(refused.body.error).toBe('The Git remote refused the credentials (HTTP 401).');
  expect(refsOf()).toBe(before);
});

test("another workspace's key cannot review or sync the workflow: 403 and the remote is unchanged", async () => {
  const before = refsOf();
  const pushes = git.requests.filter((r) => r.path.endsWith('/git-receive-pack')).length;
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
  }
  expect(refsOf()).toBe(before);
  expect(git.requests.filter((r) => r.path.endsWith('/git-receive-pack')).length).toBe(pushes);
  expect((await stack.as(b.token).get<RepositoryAnswer>(REPO)).body.repository?.credentialId).toBe(credB);
});

test('with private networks not allowed, a loopback remote is refused by the SSRF guard before any request', async () => {
  const guarded = await startTestApp({ workflowRepositoryRoot: undefined, outboundAllowPrivateNetworks: false });
  try {
    const ws = await createWorkspace(guarded, 'Guarded');
    const cred = await client(guarded, ws.token).post<CredentialEnvelope>('/api/v1/credentials', {
      name: 'Git',
      type: 'repo',
      value: { username: 'alice', token: ALICE_PASSWORD, baseUrl: pullsA.url },
      allowedHosts: [new URL(git.url).host],
    });
    const seen = git.requests.length;
    const refused = await client(guarded, ws.token).put<RepositoryAnswer>(REPO, remoteBody({ credentialId: cred.body.credential.id }));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^The Git remote is not allowed: /);
    expect(git.requests.length).toBe(seen);
    expect((await client(guarded, ws.token).get<RepositoryAnswer>(REPO)).body.repository).toBeNull();
  } finally {
    await guarded.close();
  }
});

test('a repo credential not bound to the remote host is refused before any request, at setup (400) and at use (409)', async () => {
  const ws = await createWorkspace(stack.app, 'Remote unbound');
  const gitHost = new URL(git.url).host;
  // Bound only to its pulls API (its baseUrl): not to the Git server.
  const unbound = await credential(ws, 'Pulls only', { username: 'alice', token: ALICE_PASSWORD, baseUrl: pullsA.url }, []);
  const seen = git.requests.length;
  const refused = await stack.as(ws.token).put<RepositoryAnswer>(REPO, remoteBody({ credentialId: unbound }));
  expect(refused.status).toBe(400);
  expect(refused.body.error).toBe(
    `Credential "Pulls only" may not be sent to ${gitHost}: it may be sent only to ${new URL(pullsA.url).host}. Add the host to its allowedHosts (with its secret) or use another credential.`,
  );
  expect(git.requests.length).toBe(seen);

  // Configured while bound, then rebound elsewhere (with the secret): the next review is refused before reaching the remote.
  const bound = await credential(ws, 'Git bound', { username: 'alice', token: ALICE_PASSWORD, baseUrl: pullsA.url });
  expect((await stack.as(ws.token).put<RepositoryAnswer>(REPO, remoteBody({ credentialId: bound }))).status).toBe(200);
  const rebound = await stack.as(ws.token).patch(`/api/v1/credentials/${bound}`, {
    value: { username: 'alice', token: ALICE_PASSWORD, baseUrl: pullsA.url },
    allowedHosts: ['git.example.test'],
  });
  expect(rebound.status).toBe(200);
  const created = await stack.as(ws.token).workflows.create({ name: 'Unbound flow', ...graph('u') });
  const before = git.requests.length;
  const review = await stack.as(ws.token).post<ReviewAnswer>(`/api/v1/workflows/${created.body.workflow.id}/review`, {});
  expect(review.status).toBe(409);
  expect(review.body.error).toContain(`Credential "Git bound" may not be sent to ${gitHost}`);
  expect(git.requests.length).toBe(before);
});
