/** The signed error-tracker endpoint: forged, replayed and stale deliveries are refused. */
import { createHmac } from 'node:crypto';
import { RunSchema, WebhookOutboxSchema } from '../../../db/entities';
import { addUserWithKey, createWorkspace, http, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';

let app: TestApp;
let ws: WorkspaceFixture;
const SECRET = 'tracker-signing-secret-0123456789';

beforeAll(async () => {
  app = await startTestApp({ errtrackerIngressEnabled: true }, undefined, { dispatcher: true });
  ws = await createWorkspace(app);
});
afterAll(() => app.close());

async function endpoint(): Promise<{ workflowId: string; path: string; body: any }> {
  const wf = await http(app, 'POST', '/api/v1/workflows', { token: ws.token, body: {} });
  await http(app, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/deploy`, { token: ws.token });
  const res = await http(app, 'POST', '/api/v1/webhooks', {
    token: ws.token,
    body: { provider: 'errtracker', workflowId: wf.body.workflow.id, organizationSlug: 'acme', projectSlug: 'api', signingSecret: SECRET },
  });
  expect(res.status).toBe(201);
  return { workflowId: wf.body.workflow.id, path: new URL(res.body.invokeUrl).pathname, body: res.body };
}
const sign = (raw: string, secret = SECRET) => createHmac('sha256', secret).update(raw).digest('hex');
const deliver = (target: { url: string }, path: string, raw: string, headers: Record<string, string>) =>
  http(target, 'POST', path, { rawBody: raw, headers: { 'sentry-hook-resource': 'issue', ...headers } });

test('creation is Admin or Owner only, returns invokeUrl once and keeps only a digest and an encrypted secret', async () => {
  const { body, workflowId } = await endpoint();
  expect(body.invokeUrl).toMatch(new RegExp(`^${app.url}/api/integrations/errtracker/etk_`));
  const later = await http(app, 'GET', `/api/v1/webhooks/${body.webhook.id}`, { token: ws.token });
  expect(later.body.webhook.invokeUrl).toBeNull();
  const rows: Array<Record<string, unknown>> = await app.orm.em
    .fork()
    .getConnection()
    .execute('select * from webhooks where workflow_id = ?', [workflowId]);
  const dump = JSON.stringify(rows);
  expect(dump).not.toContain(SECRET);
  expect(dump).not.toContain(new URL(body.invokeUrl).pathname.split('/').pop());

  const member = await addUserWithKey(app, ws, 'member');
  const refused = await http(app, 'POST', '/api/v1/webhooks', {
    token: member.token,
    body: { provider: 'errtracker', workflowId, organizationSlug: 'a', projectSlug: 'b', signingSecret: SECRET },
  });
  expect(refused.status).toBe(403);
  const missing = await http(app, 'POST', '/api/v1/webhooks', {
    token: ws.token,
    body: { provider: 'errtracker', workflowId, organizationSlug: 'a', projectSlug: 'b' },
  });
  expect(missing.status).toBe(400);
});

test('a correctly signed delivery starts the workflow with the event; forged, unsigned and replayed ones do not', async () => {
  const { path, workflowId } = await endpoint();
  const raw = JSON.stringify({ action: 'created', data: { issue: { id: '42', title: 'TypeError' } } });
  const ok = await deliver(app, path, raw, {
    'sentry-hook-signature': sign(raw),
    'sentry-hook-timestamp': String(Math.floor(Date.now() / 1000)),
  });
  expect(ok.status).toBe(202);
  expect(ok.body.status).toBe('accepted');

  const forged = await deliver(app, path, raw, { 'sentry-hook-signature': sign(raw, 'not-the-secret-at-all-000000') });
  expect(forged.status).toBe(401);
  const tampered = await deliver(app, path, raw.replace('42', '43'), { 'sentry-hook-signature': sign(raw) });
  expect(tampered.status).toBe(401);
  expect((await deliver(app, path, raw, {})).status).toBe(401);
  const stale = await deliver(app, path, raw, {
    'sentry-hook-signature': sign(raw),
    'sentry-hook-timestamp': String(Math.floor(Date.now() / 1000) - 3600),
  });
  expect(stale.status).toBe(401);

  const replay = await deliver(app, path, raw, { 'sentry-hook-signature': sign(raw) });
  expect(replay.status).toBe(202);
  expect(replay.body.status).toBe('deduplicated');

  const deadline = Date.now() + 15_000;
  let runs = await app.orm.em.fork().find(RunSchema, { workflowId });
  while (runs.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    runs = await app.orm.em.fork().find(RunSchema, { workflowId });
  }
  expect(runs).toHaveLength(1);
  expect(runs[0].input).toMatchObject({ action: 'created', data: { issue: { id: '42' } } });
  expect(await app.orm.em.fork().count(WebhookOutboxSchema, { workflowId })).toBe(1);
});

test('the endpoint is off unless the ingress feature switch is on', async () => {
  const { path } = await endpoint();
  const off = await startTestApp({ errtrackerIngressEnabled: false });
  try {
    const raw = '{}';
    expect((await deliver(off, path, raw, { 'sentry-hook-signature': sign(raw) })).status).toBe(404);
  } finally {
    await off.close();
  }
});

describe('an endpoint bound to an errtracker credential', () => {
  const CRED_SECRET = 'credential-signing-secret-abcdef012345';
  const credential = async (target: WorkspaceFixture, value: Record<string, unknown>, type = 'errtracker') => {
    const res = await http(app, 'POST', '/api/v1/credentials', {
      token: target.token,
      body: { name: `tracker-${Math.random().toString(36).slice(2)}`, type, value },
    });
    expect(res.status).toBe(201);
    return res.body.credential.id as string;
  };
  const create = async (credentialId: string) => {
    const wf = await http(app, 'POST', '/api/v1/workflows', { token: ws.token, body: {} });
    await http(app, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/deploy`, { token: ws.token });
    return http(app, 'POST', '/api/v1/webhooks', {
      token: ws.token,
      body: { provider: 'errtracker', workflowId: wf.body.workflow.id, organizationSlug: 'acme', projectSlug: 'api', credentialId },
    });
  };

  test("stays off while Production is not published with the connection; the credential's secret is read at delivery time", async () => {
    const id = await credential(ws, { token: 'tracker-api-token-0000', signingSecret: CRED_SECRET });
    const created = await create(id);
    expect(created.status).toBe(201);
    const path = new URL(created.body.invokeUrl).pathname;
    const raw = JSON.stringify({ action: 'created', data: { issue: { id: '7' } } });
    // A plain deploy binds no connection: the endpoint is off (spec: live once published with the selected connection).
    expect((await deliver(app, path, raw, { 'sentry-hook-signature': sign(raw, CRED_SECRET) })).status).toBe(404);
    // Bind it on Production's active activation, as a governed publish with the connection does.
    await app.orm.em
      .fork()
      .getConnection()
      .execute(
        `update workflow_target_activations a set connection_bindings = ?::jsonb from workflow_targets t, webhooks w
        where w.id = ? and t.id = w.target_id and a.id = t.active_activation_id`,
        [JSON.stringify({ tracker: id }), created.body.webhook.id],
      );
    expect((await deliver(app, path, raw, { 'sentry-hook-signature': sign(raw, CRED_SECRET) })).status).toBe(202);
    expect((await deliver(app, path, raw, { 'sentry-hook-signature': sign(raw, SECRET) })).status).toBe(401);
    // Rotating the credential's secret applies at once.
    const rotated = 'rotated-signing-secret-9876543210abc';
    expect(
      (
        await http(app, 'PATCH', `/api/v1/credentials/${id}`, {
          token: ws.token,
          body: { value: { token: 'tracker-api-token-0000', signingSecret: rotated } },
        })
      ).status,
    ).toBe(200);
    const raw2 = JSON.stringify({ action: 'created', data: { issue: { id: '8' } } });
    expect((await deliver(app, path, raw2, { 'sentry-hook-signature': sign(raw2, CRED_SECRET) })).status).toBe(401);
    expect((await deliver(app, path, raw2, { 'sentry-hook-signature': sign(raw2, rotated) })).status).toBe(202);
  });

  test('refuses a credential without a signing secret, of another type, or of another workspace', async () => {
    const noSecret = await credential(ws, { token: 'tracker-api-token-0000' });
    expect((await create(noSecret)).status).toBe(400);
    const bearer = await credential(ws, { token: 'bearer-token-0123456789' }, 'bearer');
    expect((await create(bearer)).status).toBe(400);
    const other = await createWorkspace(app, 'Other tracker workspace');
    const foreign = await credential(other, { token: 'tracker-api-token-0000', signingSecret: CRED_SECRET });
    const res = await create(foreign);
    expect(res.status).toBe(400);
    expect(res.text).not.toContain(CRED_SECRET);
  });
});
