/**
 * Triggers per destination: each published destination with a webhook trigger has its own
 * URL (previews and production never share one), listed with its destination; a preview's
 * URL answers only while it is published under an approval. Error-tracker endpoints of a named
 * destination stay off until it is published, and `nodeId` selects the trigger. Schedules
 * follow each destination's active pointer.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { RunSchema } from '../../../db/entities';
import { waitForRun } from '../../support/harness';
import { createWorkspace, eventually, http, useTestStack, type CredentialEnvelope } from '../../kit';
import type { z } from 'zod';
import type { createdErrtrackerWebhookSchema } from '../../../api/schemas/webhooks';

type CreatedErrtrackerWebhook = z.infer<typeof createdErrtrackerWebhookSchema>;
import { approved, change, changed, createWorkflow, ownerCookie, production, publishCandidate, targetById } from './helpers';

let cookie: string;

const stack = useTestStack({ config: { errtrackerIngressEnabled: true }, temporal: { dispatcher: true } });
beforeAll(async () => {
  cookie = await ownerCookie(stack.app, stack.ws);
});

const hookGraph = (value: string) => ({
  nodes: [
    { id: 'hook', type: 'webhook', config: {} },
    { id: 'out', type: 'transform', config: { expression: `{ "from": ${JSON.stringify(value)}, "n": n }` } },
  ],
  edges: [{ source: 'hook', target: 'out' }],
});

const runsOf = (workflowId: string) => stack.app.orm.em.fork().find(RunSchema, { workflowId }, { orderBy: { createdAt: 'asc' } });
/** A webhook URL's path; a missing URL (`null`) fails as `new URL` does. */
const pathOf = (url: string | null) => new URL(url!).pathname;

/** A workflow deployed (legacy) at "prod" and a preview saved at "preview" (not yet published). */
async function setup(graph = hookGraph) {
  const wfId = await createWorkflow(stack.app, stack.ws.token, graph('prod'));
  const deployed = await stack.api.workflows.deploy(wfId);
  expect(deployed.status).toBe(200);
  const prod = await production(stack.app, stack.ws.token, wfId);
  const created = await changed(stack.app, stack.ws.token, wfId, {
    action: 'create-preview',
    versionId: prod.activeVersionId,
    name: 'Preview',
  });
  const saved = await changed(stack.app, stack.ws.token, wfId, {
    action: 'save-candidate',
    targetId: created.target.targetId,
    expectedRevision: created.target.revision,
    name: 'Preview',
    ...graph('preview'),
  });
  return { wfId, deployed: deployed.body, preview: saved.target };
}

async function publish(wfId: string, target: any) {
  await approved(stack.app, cookie, wfId, target.targetId, target.candidateVersionId);
  const res = await publishCandidate(stack.app, stack.ws.token, wfId, target);
  expect(res.status).toBe(200);
  return res.body;
}

test('previews and production never share a webhook URL; each runs its own published version', async () => {
  const { wfId, deployed, preview } = await setup();
  const prodUrl = deployed.webhookUrl;
  // Not published yet: the preview has no URL.
  const before = await stack.api.webhooks.list(`?workflowId=${wfId}`);
  expect(before.body.webhooks).toHaveLength(1);

  const published = await publish(wfId, preview);
  expect(published.webhooks).toEqual([
    expect.objectContaining({ nodeId: 'hook', kind: 'generic', invokeUrl: expect.stringMatching(/\/api\/webhooks\/whk_/) }),
  ]);
  const previewUrl = published.webhooks![0].invokeUrl;
  expect(previewUrl).not.toBe(prodUrl);

  const list = await stack.api.webhooks.list(`?workflowId=${wfId}`);
  const byUrl = new Map(list.body.webhooks.map((w) => [w.invokeUrl, w]));
  expect(byUrl.get(prodUrl)).toMatchObject({ destination: { kind: 'production', name: 'Production' } });
  expect(byUrl.get(previewUrl)).toMatchObject({ destination: { targetId: preview.targetId, kind: 'preview', name: 'Preview' } });
  const one = await stack.api.webhooks.get(published.webhooks![0].id);
  expect(one.body.webhook.destination).toEqual({ targetId: preview.targetId, kind: 'preview', name: 'Preview' });

  expect((await http(stack.app, 'POST', pathOf(previewUrl), { body: { n: 1 } })).status).toBe(202);
  expect((await http(stack.app, 'POST', pathOf(String(prodUrl)), { body: { n: 2 } })).status).toBe(202);
  const runs = await eventually(
    () => runsOf(wfId),
    (r) => r.length === 2 && r.every((x) => x.status === 'succeeded'),
  );
  const outputs = runs.map((r) => r.output as { from: string; n: number }).sort((a, b) => a.n - b.n);
  expect(outputs).toEqual([
    { from: 'preview', n: 1 },
    { from: 'prod', n: 2 },
  ]);
  const previewRun = runs.find((r) => (r.output as { n: number }).n === 1)!;
  expect((await waitForRun(stack.app, stack.ws.token, previewRun.id)).executionTarget).toMatchObject({
    targetId: preview.targetId,
    kind: 'preview',
  });
  const description = await stack.app.deps.temporal.client.workflow.getHandle(previewRun.id).describe();
  expect((description.searchAttributes as Record<string, unknown>).SvcTarget).toEqual([`preview:${preview.targetId}`]);
});

test("a preview's URL answers only while it is published; stop turns it off, resuming brings back the same URL", async () => {
  const { wfId, preview } = await setup();
  const published = await publish(wfId, preview);
  const url = pathOf(published.webhooks![0].invokeUrl);
  expect((await http(stack.app, 'POST', url, { body: { n: 1 } })).status).toBe(202);
  // Dispatched before the stop: an accepted request whose destination stops first is not run.
  await eventually(
    () => runsOf(wfId),
    (r) => r.length === 1,
  );

  const stopped = await changed(stack.app, stack.ws.token, wfId, {
    action: 'stop',
    targetId: preview.targetId,
    expectedRevision: published.target.revision,
  });
  expect((await http(stack.app, 'POST', url, { body: { n: 2 } })).status).toBe(404);
  // Production is untouched by the preview's stop.
  expect(
    (
      await http(
        stack.app,
        'POST',
        pathOf(
          String(
            (await stack.api.webhooks.list(`?workflowId=${wfId}`)).body.webhooks.find((w) => w.destination?.kind === 'production')
              ?.invokeUrl,
          ),
        ),
        { body: { n: 3 } },
      )
    ).status,
  ).toBe(202);

  const resumed = await change(stack.app, stack.ws.token, wfId, {
    action: 'publish',
    targetId: preview.targetId,
    expectedRevision: stopped.target.revision,
    versionId: stopped.target.activeVersionId,
    requestId: randomUUID(),
    resumeActivationId: stopped.target.activeActivationId,
  });
  expect(resumed.status).toBe(200);
  expect(resumed.body.webhooks![0].invokeUrl).toBe(published.webhooks![0].invokeUrl);
  expect((await http(stack.app, 'POST', url, { body: { n: 4 } })).status).toBe(202);
  const runs = await eventually(
    () => runsOf(wfId),
    (r) => r.length === 3,
  );
  expect(runs.map((r) => (r.input as { n: number }).n).sort()).toEqual([1, 3, 4]);
});

describe('error-tracker endpoints of a named destination', () => {
  const SECRET = 'tracker-signing-secret-0123456789';
  const sign = (raw: string) => createHmac('sha256', SECRET).update(raw).digest('hex');
  const deliver = (path: string, raw: string) =>
    http(stack.app, 'POST', path, { rawBody: raw, headers: { 'sentry-hook-signature': sign(raw) } });
  const startGraph = (value: string) => ({
    nodes: [
      { id: 'hook', type: 'webhook', config: {} },
      { id: 'hookOut', type: 'transform', config: { expression: '{ "from": "hook" }' } },
      { id: 'entry', type: 'start', config: {} },
      { id: 'out', type: 'transform', config: { expression: `{ "from": ${JSON.stringify(value)} }` } },
    ],
    edges: [
      { source: 'hook', target: 'hookOut' },
      { source: 'entry', target: 'out' },
    ],
  });

  test('stay off until the destination is approved and published; nodeId selects the trigger; bad input is refused', async () => {
    const { wfId, preview } = await setup(startGraph);
    const body = {
      provider: 'errtracker',
      workflowId: wfId,
      organizationSlug: 'acme',
      projectSlug: 'api',
      signingSecret: SECRET,
      executionTargetId: preview.targetId,
    };
    const noNode = await http(stack.app, 'POST', '/api/v1/webhooks', { token: stack.ws.token, body });
    expect(noNode.status).toBe(400);
    const notTrigger = await http<{ code: string }>(stack.app, 'POST', '/api/v1/webhooks', {
      token: stack.ws.token,
      body: { ...body, nodeId: 'out' },
    });
    expect([notTrigger.status, notTrigger.body.code]).toEqual([400, 'event_source_trigger_not_found']);
    const other = await setup(startGraph);
    const foreign = await http(stack.app, 'POST', '/api/v1/webhooks', {
      token: stack.ws.token,
      body: { ...body, executionTargetId: other.preview.targetId, nodeId: 'entry' },
    });
    expect(foreign.status).toBe(404);

    const created = await http<CreatedErrtrackerWebhook>(stack.app, 'POST', '/api/v1/webhooks', {
      token: stack.ws.token,
      body: { ...body, nodeId: 'entry' },
    });
    expect(created.status).toBe(201);
    expect(created.body.webhook).toMatchObject({ nodeId: 'entry', kind: 'errtracker' });
    const path = pathOf(created.body.invokeUrl);
    const raw = JSON.stringify({ action: 'created', data: { issue: { id: '7' } } });
    expect((await deliver(path, raw)).status).toBe(404);
    expect((await targetById(stack.app, stack.ws.token, wfId, preview.targetId)).sources.errtracker).toEqual([
      { webhookId: created.body.webhook.id, nodeId: 'entry', live: false },
    ]);

    // Published without an approval? Impossible: publish refuses. With one, the endpoint is live.
    await publish(wfId, preview);
    expect((await targetById(stack.app, stack.ws.token, wfId, preview.targetId)).sources.errtracker[0].live).toBe(true);
    const ok = await deliver(path, raw);
    expect(ok.status).toBe(202);
    const [run] = await eventually(
      () => runsOf(wfId),
      (r) => r.length === 1 && r[0].status === 'succeeded',
    );
    expect(run.output).toEqual({ from: 'preview' });
    expect(run.startNodeId).toBe('entry');
    expect(run.executionTarget).toMatchObject({ targetId: preview.targetId, kind: 'preview' });
  });
});

describe('an error-tracker endpoint bound to a credential', () => {
  const CRED_SECRET = 'credential-signing-secret-abcdef012345';
  const sign = (raw: string) => createHmac('sha256', CRED_SECRET).update(raw).digest('hex');
  const deliver = (path: string, raw: string) =>
    http(stack.app, 'POST', path, { rawBody: raw, headers: { 'sentry-hook-signature': sign(raw) } });
  const graph = (value: string) => ({
    nodes: [
      { id: 'entry', type: 'start', config: {} },
      { id: 'out', type: 'transform', config: { expression: `{ "from": ${JSON.stringify(value)} }` } },
    ],
    edges: [{ source: 'entry', target: 'out' }],
  });

  test("stays off until its destination is published with that connection bound, then verifies with the credential's signing secret", async () => {
    const { wfId, preview } = await setup(graph);
    const cred = await http<CredentialEnvelope>(stack.app, 'POST', '/api/v1/credentials', {
      token: stack.ws.token,
      body: {
        name: `tracker-${randomUUID().slice(0, 8)}`,
        type: 'errtracker',
        value: { token: 'tracker-api-token-0000', signingSecret: CRED_SECRET },
      },
    });
    expect(cred.status).toBe(201);
    const credentialId = cred.body.credential.id;
    const created = await http<CreatedErrtrackerWebhook>(stack.app, 'POST', '/api/v1/webhooks', {
      token: stack.ws.token,
      body: {
        provider: 'errtracker',
        workflowId: wfId,
        organizationSlug: 'acme',
        projectSlug: 'api',
        credentialId,
        executionTargetId: preview.targetId,
        nodeId: 'entry',
      },
    });
    expect(created.status).toBe(201);
    const path = pathOf(created.body.invokeUrl);
    const raw = JSON.stringify({ action: 'created', data: { issue: { id: '9' } } });

    // Published without the connection: still off.
    const first = await publish(wfId, preview);
    expect((await deliver(path, raw)).status).toBe(404);
    // Bind the connection and publish again: live, and deliveries verify with the credential's secret.
    const bound = await changed(stack.app, stack.ws.token, wfId, {
      action: 'save-connections',
      targetId: preview.targetId,
      expectedRevision: first.target.revision,
      bindings: { tracker: credentialId },
    });
    await publish(wfId, bound.target);
    expect((await deliver(path, raw)).status).toBe(202);
    const forged = await http(stack.app, 'POST', path, {
      rawBody: raw,
      headers: { 'sentry-hook-signature': createHmac('sha256', 'another-secret-0000000000').update(raw).digest('hex') },
    });
    expect(forged.status).toBe(401);
    const [run] = await eventually(
      () => runsOf(wfId),
      (r) => r.length === 1 && r[0].status === 'succeeded',
    );
    expect(run.output).toEqual({ from: 'preview' });
  });
});

describe('schedules follow the active pointer of each destination', () => {
  const scheduleGraph = (value: string) => ({
    nodes: [
      { id: 'tick', type: 'schedule', config: { cron: '0 0 1 1 *', timezone: 'UTC' } },
      { id: 'out', type: 'transform', config: { expression: JSON.stringify(value) } },
    ],
    edges: [{ source: 'tick', target: 'out' }],
  });
  const describeSchedule = (id: string) => stack.app.deps.temporal.client.schedule.getHandle(id).describe();

  test('a published preview has its own schedule running its version; stop removes it; delete removes every one', async () => {
    const { wfId, preview } = await setup(scheduleGraph);
    const productionSchedule = `sched_${wfId}_tick`;
    const previewSchedule = `schedt_${preview.targetId}_tick`;
    await describeSchedule(productionSchedule);
    await expect(describeSchedule(previewSchedule)).rejects.toThrow();

    const published = await publish(wfId, preview);
    const described = await describeSchedule(previewSchedule);
    // The runs it starts carry the destination (the action's search attributes).
    expect(((described.action as { searchAttributes?: Record<string, unknown> }).searchAttributes ?? {}).SvcTarget).toEqual([
      `preview:${preview.targetId}`,
    ]);
    await stack.app.deps.temporal.client.schedule.getHandle(previewSchedule).trigger();
    const [run] = await eventually(
      () => runsOf(wfId),
      (r) => r.length === 1 && r[0].status === 'succeeded',
    );
    expect(run).toMatchObject({ trigger: 'schedule', output: 'preview', versionId: preview.candidateVersionId });
    expect(run.executionTarget).toMatchObject({ targetId: preview.targetId, kind: 'preview' });

    await changed(stack.app, stack.ws.token, wfId, {
      action: 'stop',
      targetId: preview.targetId,
      expectedRevision: published.target.revision,
    });
    await expect(describeSchedule(previewSchedule)).rejects.toThrow();
    await describeSchedule(productionSchedule);

    const again = await targetById(stack.app, stack.ws.token, wfId, preview.targetId);
    await change(stack.app, stack.ws.token, wfId, {
      action: 'publish',
      targetId: again.targetId,
      expectedRevision: again.revision,
      versionId: again.activeVersionId,
      requestId: randomUUID(),
      resumeActivationId: again.activeActivationId,
    });
    await describeSchedule(previewSchedule);
    expect((await http(stack.app, 'DELETE', `/api/v1/workflows/${wfId}`, { token: stack.ws.token })).status).toBe(200);
    await expect(describeSchedule(previewSchedule)).rejects.toThrow();
    await expect(describeSchedule(productionSchedule)).rejects.toThrow();
  });
});

test('webhooks of other workspaces stay unreachable through destinations', async () => {
  const { wfId, preview } = await setup();
  const published = await publish(wfId, preview);
  const other = await createWorkspace(stack.app, 'Other');
  const foreign = await http(stack.app, 'GET', `/api/v1/webhooks/${published.webhooks![0].id}`, { token: other.token });
  expect(foreign.status).toBe(403);
  expect((await stack.as(other.token).webhooks.list(`?workflowId=${wfId}`)).body.webhooks).toEqual([]);
});
