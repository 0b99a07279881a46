/** The signed error-tracker endpoint: forged, replayed and stale deliveries are refused. */
import { createHmac } from 'node:crypto';
import { RunSchema, WebhookOutboxSchema } from '../../../db/entities';
import type { z } from 'zod';
import type { createdErrtrackerWebhookSchema } from '../../../api/schemas/webhooks';
import { startTestApp } from '../../support/harness';
import {
  addUserWithKey,
  createWorkspace,
  http,
  useTestStack,
  type AcceptedDelivery,
  type CredentialEnvelope,
  type WorkspaceFixture,
} from '../../kit';

type CreatedErrtrackerWebhook = z.infer<typeof createdErrtrackerWebhookSchema>;

const SECRET = 'tracker-signing-secret-0123456789';

const stack = useTestStack({ config: { errtrackerIngressEnabled: true }, temporal: { dispatcher: true }, worker: false });

/** A deployed workflow (the API's default graph), as the workspace's owner; returns its id. */
async function deployedWorkflow(): Promise<string> {
  const wf = await stack.api.workflows.create({});
  await stack.api.workflows.deploy(wf.body.workflow.id);
  return wf.body.workflow.id;
}

async function endpoint(): Promise<{ workflowId: string; path: string; body: CreatedErrtrackerWebhook }> {
  const workflowId = await deployedWorkflow();
  const res = await stack.api.post<CreatedErrtrackerWebhook>('/api/v1/webhooks', {
    provider: 'errtracker',
    workflowId,
    organizationSlug: 'acme',
    projectSlug: 'api',
    signingSecret: SECRET,
  });
  expect(res.status).toBe(201);
  return { workflowId, path: new URL(res.body.invokeUrl).pathname, body: res.body };
}
const sign = (raw: string, secret = SECRET) => createHmac('sha256', secret).update(raw).digest('hex');
const deliver = (target: { url: string }, path: string, raw: string, headers: Record<string, string>) =>
  http<AcceptedDelivery>(target, 'POST', path, { rawBody: raw, headers: { 'sentry-hook-resource': 'issue', ...headers } });

test('creation is Admin or Owner only, returns invokeUrl once and keeps only a digest and an encrypted secret', async () => {
  const { body, workflowId } = await endpoint();
  const { app, ws } = stack;
  expect(body.invokeUrl).toMatch(new RegExp(`^${app.url}/api/integrations/errtracker/etk_`));
  const later = await stack.api.webhooks.get(body.webhook.id);
  expect(later.body.webhook.invokeUrl).toBeNull();
  const rows: Array<Record<string, unknown>> = await app.orm.em
    .fork()
    .getConnection()
    .execute('select * from webhooks where workflow_id = ?', [workflowId]);
  const dump = JSON.stringify(rows);
  expect(dump).not.toContain(SECRET);
  expect(dump).not.toContain(new URL(body.invokeUrl).pathname.split('/').pop());

  const member = await addUserWithKey(app, ws, 'member');
  const refused = await stack.as(member.token).post('/api/v1/webhooks', {
    provider: 'errtracker',
    workflowId,
    organizationSlug: 'a',
    projectSlug: 'b',
    signingSecret: SECRET,
  });
  expect(refused.status).toBe(403);
  const missing = await stack.api.post('/api/v1/webhooks', { provider: 'errtracker', workflowId, organizationSlug: 'a', projectSlug: 'b' });
  expect(missing.status).toBe(400);
});

test('a correctly signed delivery starts the workflow with the event; forged, unsigned and replayed ones do not', async () => {
  const { app } = stack;
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
    const res = await stack.as(target.token).post<CredentialEnvelope>('/api/v1/credentials', {
      name: `tracker-${Math.random().toString(36).slice(2)}`,
      type,
      value,
    });
    expect(res.status).toBe(201);
    return res.body.credential.id;
  };
  const create = async (credentialId: string) => {
    const workflowId = await deployedWorkflow();
    return stack.api.post<CreatedErrtrackerWebhook>('/api/v1/webhooks', {
      provider: 'errtracker',
      workflowId,
      organizationSlug: 'acme',
      projectSlug: 'api',
      credentialId,
    });
  };

  test("stays off while Production is not published with the connection; the credential's secret is read at delivery time", async () => {
    const { app, ws } = stack;
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
      (await stack.api.patch(`/api/v1/credentials/${id}`, { value: { token: 'tracker-api-token-0000', signingSecret: rotated } })).status,
    ).toBe(200);
    const raw2 = JSON.stringify({ action: 'created', data: { issue: { id: '8' } } });
    expect((await deliver(app, path, raw2, { 'sentry-hook-signature': sign(raw2, CRED_SECRET) })).status).toBe(401);
    expect((await deliver(app, path, raw2, { 'sentry-hook-signature': sign(raw2, rotated) })).status).toBe(202);
  });

  test('refuses a credential without a signing secret, of another type, or of another workspace', async () => {
    const { app, ws } = stack;
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
