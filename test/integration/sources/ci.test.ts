/** CI sources: Jenkins-style JSON API, baseline per job, one run per new matching build, running builds hold the cursor. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keySettingsOf } from '../../../services/credentials';
import { pollCiSource } from '../../../services/sources';
import { http, useTestStack, type CreatedWorkflow, type CredentialEnvelope } from '../../kit';
import { runsOfWorkflow } from '../../support/runs';
import { changed, listTargets } from '../destinations/helpers';
import { ciScheduleId, syncSourceSchedules } from '../../../temporal/sourcesClient';

let server: Server;
let base: string;
const builds: Record<string, Array<{ number: number; result: string | null }>> = { api: [], 'folder/web': [] };
const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
const TOKEN = 'ci-api-token-0123456789';

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const url = new URL(req.url ?? '/', 'http://x');
    const match = /^\/job\/(.+)\/api\/json$/.exec(url.pathname);
    const job = match ? decodeURIComponent(match[1].split('/job/').join('/')) : null;
    if (!job || !(job in builds)) return void res.writeHead(404).end('{}');
    const list = [...builds[job]]
      .reverse()
      .map((b) => ({ ...b, url: `${base}/job/${job}/${b.number}/`, timestamp: 1_700_000_000_000 + b.number }));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ _class: 'hudson.model.FreeStyleProject', builds: list }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
const stack = useTestStack(() => ({ config: { outboundAllowPrivateNetworks: true }, temporal: { dispatcher: true } }));
stack.beforeClose(async () => {
  for (const id of scheduled)
    await stack.app.deps.temporal.client.schedule
      .getHandle(id)
      .delete()
      .catch(() => undefined);
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
});
const scheduled = new Set<string>();

const runsOf = (workflowId: string, count: number) => runsOfWorkflow(stack.app, workflowId, count);

test('baseline, then one api run per new completed FAILURE build; a running build holds the cursor; job errors are kept per job', async () => {
  const { app, ws } = stack;
  const cred = await http<CredentialEnvelope>(app, 'POST', '/api/v1/credentials', {
    token: ws.token,
    body: { name: 'Jenkins', type: 'ci', value: { token: TOKEN, username: 'bot', baseUrl: base } },
  });
  expect(cred.status).toBe(201);
  const wf = await http<CreatedWorkflow>(app, 'POST', '/api/v1/workflows', {
    token: ws.token,
    body: {
      nodes: [
        { id: 'build', type: 'ci', config: {} },
        { id: 'out', type: 'transform', config: { expression: '"ci"' } },
      ],
      edges: [{ source: 'build', target: 'out' }],
    },
  });
  expect(wf.status).toBe(201);
  const workflowId = wf.body.workflow.id;
  expect((await http(app, 'POST', `/api/v1/workflows/${workflowId}/deploy`, { token: ws.token })).status).toBe(200);
  const prod = (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!;
  const configured = await changed(app, ws.token, workflowId, {
    action: 'configure-source',
    expectedRevision: prod.revision,
    source: {
      kind: 'ci',
      targetId: prod.targetId,
      nodeId: 'build',
      credentialId: cred.body.credential.id,
      jobs: ['api', 'folder/web', 'missing'],
      results: ['FAILURE'],
    },
  });
  const sourceId = configured.receipt.sourceId!;
  const poll = () => pollCiSource(app.orm.em.fork(), { keys: keySettingsOf(app.deps.config), allowPrivateNetworks: true }, sourceId);
  const sourceView = async () =>
    (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!.sources.ci[0];

  builds.api = [
    { number: 1, result: 'SUCCESS' },
    { number: 2, result: 'FAILURE' },
  ];
  builds['folder/web'] = [];
  expect(await poll()).toEqual({ outcome: 'polled', started: 0 });
  let view = await sourceView();
  expect(view.jobStatuses.api).toMatchObject({ baselineBuildNumber: 2, lastSeenBuildNumber: 2, omittedBuildCount: 0, error: null });
  expect(view.jobStatuses['folder/web']).toMatchObject({ baselineBuildNumber: 0, lastSeenBuildNumber: 0 });
  expect(view.jobStatuses.missing.error).toContain('HTTP 404');
  expect(view.lastPolledAt).toEqual(expect.any(String));
  expect(seen.some((s) => s.url.startsWith('/job/folder/job/web/api/json?tree=builds'))).toBe(true);
  expect(seen[0].headers.authorization).toBe(`Basic ${Buffer.from(`bot:${TOKEN}`).toString('base64')}`);

  // 3 failed, 4 still running, 5 failed: only 3 now (4 holds the cursor).
  builds.api.push({ number: 3, result: 'FAILURE' }, { number: 4, result: null }, { number: 5, result: 'FAILURE' });
  builds['folder/web'].push({ number: 1, result: 'SUCCESS' });
  expect(await poll()).toEqual({ outcome: 'polled', started: 1 });
  expect((await sourceView()).jobStatuses.api.lastSeenBuildNumber).toBe(3);
  builds.api[3].result = 'FAILURE';
  expect(await poll()).toEqual({ outcome: 'polled', started: 2 });
  expect(await poll()).toEqual({ outcome: 'polled', started: 0 });
  view = await sourceView();
  expect(view.jobStatuses.api.lastSeenBuildNumber).toBe(5);
  expect(view.jobStatuses['folder/web'].lastSeenBuildNumber).toBe(1);
  expect(JSON.stringify(view)).not.toContain(TOKEN);
  expect(JSON.stringify(view)).not.toContain(base);

  const runs = await runsOf(workflowId, 3);
  expect(runs).toHaveLength(3);
  expect(runs.every((r) => r.trigger === 'api')).toBe(true);
  expect(runs.map((r) => (r.input as { ci: { build: { number: number } } }).ci.build.number).sort()).toEqual([3, 4, 5]);
});

test('the source is polled by its ci_ Temporal Schedule', async () => {
  const { app, ws } = stack;
  const cred = await http<CredentialEnvelope>(app, 'POST', '/api/v1/credentials', {
    token: ws.token,
    body: { name: 'Jenkins2', type: 'ci', value: { token: TOKEN, username: 'bot', baseUrl: base } },
  });
  expect(cred.status).toBe(201);
  const wf = await http<CreatedWorkflow>(app, 'POST', '/api/v1/workflows', {
    token: ws.token,
    body: { nodes: [{ id: 'build', type: 'ci', config: {} }], edges: [] },
  });
  const workflowId = wf.body.workflow.id;
  await http(app, 'POST', `/api/v1/workflows/${workflowId}/deploy`, { token: ws.token });
  const prod = (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!;
  const configured = await changed(app, ws.token, workflowId, {
    action: 'configure-source',
    expectedRevision: prod.revision,
    source: { kind: 'ci', targetId: prod.targetId, nodeId: 'build', credentialId: cred.body.credential.id, jobs: ['api'] },
  });
  const sourceId = configured.receipt.sourceId!;
  const synced = await syncSourceSchedules(app.deps.temporal.client, app.orm.em.fork());
  synced.kept.forEach((id) => scheduled.add(id));
  expect(synced.kept).toContain(ciScheduleId(sourceId));
  await app.deps.temporal.client.schedule.getHandle(ciScheduleId(sourceId)).trigger();
  const view = async () =>
    (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!.sources.ci[0];
  const deadline = Date.now() + 30_000;
  while ((await view()).lastPolledAt === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  expect((await view()).jobStatuses.api).toMatchObject({ baselineBuildNumber: builds.api[builds.api.length - 1].number, error: null });
});

test('a source naming a credential of another kind sends it nowhere it is not bound to (issue 27 item 5)', async () => {
  const { app, ws } = stack;
  const secret = 'bound-elsewhere-token-0123456789';
  const cred = await http<CredentialEnvelope>(app, 'POST', '/api/v1/credentials', {
    token: ws.token,
    body: { name: 'Bound elsewhere', type: 'bearer', value: { token: secret }, allowedHosts: ['api.example.test'] },
  });
  expect(cred.status).toBe(201);
  const wf = await http<CreatedWorkflow>(app, 'POST', '/api/v1/workflows', {
    token: ws.token,
    body: { nodes: [{ id: 'build', type: 'ci', config: {} }], edges: [] },
  });
  const workflowId = wf.body.workflow.id;
  expect((await http(app, 'POST', `/api/v1/workflows/${workflowId}/deploy`, { token: ws.token })).status).toBe(200);
  const prod = (await listTargets(app, ws.token, workflowId)).targets.find((t: { kind: string }) => t.kind === 'production')!;
  const configured = await changed(app, ws.token, workflowId, {
    action: 'configure-source',
    expectedRevision: prod.revision,
    source: { kind: 'ci', targetId: prod.targetId, nodeId: 'build', credentialId: cred.body.credential.id, jobs: ['api'] },
  });
  const before = seen.length;
  // The deployment's CI server (the loopback fake) is not a host the bearer credential was made for.
  const result = await pollCiSource(
    app.orm.em.fork(),
    { keys: keySettingsOf(app.deps.config), allowPrivateNetworks: true, defaultBaseUrl: base },
    configured.receipt.sourceId!,
  );
  expect(result).toEqual({
    outcome: 'failed',
    started: 0,
    error: `Credential "Bound elsewhere" may not be sent to ${new URL(base).host}: it may be sent only to api.example.test. Add the host to its allowedHosts (with its secret) or use another credential.`,
  });
  // (The schedule of the test above may poll the fake meanwhile, with its own credential.)
  expect(seen.slice(before).filter((s) => s.headers.authorization === `Bearer ${secret}`)).toEqual([]);
});
