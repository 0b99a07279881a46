/**
 * POST /workflows/{id}/targets: every action of the spec's table succeeds, refuses a stale
 * revision (409 workflow_target_revision_conflict, nothing changed), missing fields (400) and
 * keys without write and execute authority (403), replays the same receipt for the same key
 * and change, and refuses the key for another change or principal (409). GET /targets and
 * cross-workspace ids (404, nothing changed).
 */
import { randomUUID } from 'node:crypto';
import { addUserWithKey, http, nodesOf, useTestStack, type DeployResult, type NodeInput, type WorkflowWithLinks } from '../../kit';
import {
  approved,
  change,
  changed,
  createCredential,
  createWorkflow,
  graphReturning,
  listTargets,
  ownerCookie,
  production,
  publishCandidate,
  snapshot,
  targetById,
  targetsPath,
  type ChangeResult,
  type WorkflowTarget,
} from './helpers';

// Routes only: destination changes run no workflow, so the stack has no worker.
const stack = useTestStack({ worker: false });
let cookie: string;
let viewer: { token: string };
let member: { token: string };
let personal: { token: string };

beforeAll(async () => {
  cookie = await ownerCookie(stack.app, stack.ws);
  viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
  member = await addUserWithKey(stack.app, stack.ws, 'member');
  personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
});

const patchGraph = (id: string, value: string) =>
  http(stack.app, 'PATCH', `/api/v1/workflows/${id}`, { token: stack.ws.token, body: graphReturning(value) });
const deploy = async (id: string) => {
  const res = await http<DeployResult>(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  expect(res.status).toBe(200);
  return res.body;
};

interface Fixture {
  wfId: string;
  prod: WorkflowTarget;
  preview: WorkflowTarget;
  versions: Record<'v1' | 'v2' | 'v3', string>;
  /** Production's first activation (v1), no longer active. */
  firstActivationId: string;
  credentialId: string;
}

/**
 * A workflow whose Production ran v1 then v2 (two deploy activations) and has v3 prepared
 * and approved as its candidate, and a preview "Staging" published at v1 under an approval.
 */
async function fixture(): Promise<Fixture> {
  const wfId = await createWorkflow(stack.app, stack.ws.token, graphReturning('v1'));
  const v1 = (await deploy(wfId)).synchronizedVersionId;
  await patchGraph(wfId, 'v2');
  const v2 = (await deploy(wfId)).synchronizedVersionId;
  await patchGraph(wfId, 'v3');
  const v3 = (await changed(stack.app, stack.ws.token, wfId, { action: 'prepare-production' })).receipt.versionId!;
  await approved(stack.app, cookie, wfId, (await production(stack.app, stack.ws.token, wfId)).targetId, v3);
  const created = await changed(stack.app, stack.ws.token, wfId, { action: 'create-preview', versionId: v1, name: 'Staging' });
  await approved(stack.app, cookie, wfId, created.target.targetId, v1);
  const published = await publishCandidate(stack.app, stack.ws.token, wfId, created.target);
  expect(published.status).toBe(200);
  const history = (await listTargets(stack.app, stack.ws.token, wfId, true)).history;
  return {
    wfId,
    prod: await production(stack.app, stack.ws.token, wfId),
    preview: published.body.target,
    versions: { v1, v2, v3 },
    firstActivationId: history[history.length - 1].activationId,
    credentialId: await createCredential(stack.app, stack.ws),
  };
}

interface ActionCase {
  action: string;
  build: (fx: Fixture) => Record<string, unknown>;
  /** Fields whose absence is a 400. */
  required: string[];
  /** The destination whose expectedRevision the change carries (stale revisions are tested). */
  revisioned?: (fx: Fixture) => WorkflowTarget;
  /** What the successful answer shows. */
  check?: (body: ChangeResult, fx: Fixture) => void | Promise<void>;
}

const cases: ActionCase[] = [
  {
    action: 'prepare-production',
    build: () => ({}),
    required: [],
    check: (body, fx) => {
      expect(body.receipt).toMatchObject({ action: 'prepare-production', targetId: fx.prod.targetId, versionId: fx.versions.v3 });
      expect(body.target.activeVersionId).toBe(fx.versions.v2);
    },
  },
  {
    action: 'create-preview',
    build: (fx) => ({ versionId: fx.versions.v2, name: 'QA' }),
    required: ['versionId', 'name'],
    check: (body, fx) =>
      expect(body.target).toMatchObject({
        kind: 'preview',
        name: 'QA',
        revision: 1,
        enabled: false,
        candidateVersionId: fx.versions.v2,
        activeVersionId: null,
      }),
  },
  {
    action: 'rename-preview',
    revisioned: (fx) => fx.preview,
    build: (fx) => ({ targetId: fx.preview.targetId, expectedRevision: fx.preview.revision, name: 'Staging 2' }),
    required: ['targetId', 'expectedRevision', 'name'],
    check: (body, fx) => expect(body.target).toMatchObject({ name: 'Staging 2', revision: fx.preview.revision + 1 }),
  },
  {
    action: 'rename-version',
    build: (fx) => ({ versionId: fx.versions.v1, displayLabel: 'first cut' }),
    required: ['versionId', 'displayLabel'],
    check: async (_body, fx) => {
      const history = (await listTargets(stack.app, stack.ws.token, fx.wfId, true)).history;
      expect(history.find((h) => h.versionId === fx.versions.v1)?.displayLabel).toBe('first cut');
    },
  },
  {
    action: 'save-candidate',
    revisioned: (fx) => fx.preview,
    build: (fx) => ({
      targetId: fx.preview.targetId,
      expectedRevision: fx.preview.revision,
      name: 'Staging graph',
      description: 'saved',
      ...graphReturning('staging'),
    }),
    required: ['targetId', 'expectedRevision', 'name', 'nodes', 'edges'],
    check: (body, fx) => {
      expect(body.target.candidateVersion).toBe(4);
      expect(body.target.activeVersionId).toBe(fx.versions.v1);
    },
  },
  {
    action: 'save-connections',
    revisioned: (fx) => fx.preview,
    build: (fx) => ({
      targetId: fx.preview.targetId,
      expectedRevision: fx.preview.revision,
      bindings: { api: fx.credentialId },
      allowProductionReactivation: true,
    }),
    required: ['targetId', 'expectedRevision', 'bindings'],
    check: (body, fx) =>
      expect(body.target.connections).toEqual({
        bindings: { api: fx.credentialId },
        childDependencies: {},
        allowProductionReactivation: true,
      }),
  },
  {
    action: 'restore-candidate',
    revisioned: (fx) => fx.prod,
    build: (fx) => ({ targetId: fx.prod.targetId, expectedRevision: fx.prod.revision, versionId: fx.versions.v1 }),
    required: ['targetId', 'expectedRevision', 'versionId'],
    check: async (body, fx) => {
      expect(body.target).toMatchObject({ candidateVersionId: fx.versions.v1, activeVersionId: fx.versions.v2 });
      // Production's candidate is the editor's draft.
      const wf = await http<WorkflowWithLinks>(stack.app, 'GET', `/api/v1/workflows/${fx.wfId}`, { token: stack.ws.token });
      expect(nodesOf(wf.body.workflow)[1].config?.expression).toBe('"v1"');
    },
  },
  {
    action: 'prepare-promotion',
    revisioned: (fx) => fx.prod,
    build: (fx) => ({
      sourceTargetId: fx.preview.targetId,
      sourceActivationId: fx.preview.activeActivationId,
      productionTargetId: fx.prod.targetId,
      expectedRevision: fx.prod.revision,
    }),
    required: ['sourceTargetId', 'sourceActivationId', 'productionTargetId', 'expectedRevision'],
    check: (body, fx) => {
      expect(body.receipt.preparedPublicationVersionId).toBe(fx.versions.v1);
      expect(body.target.prepared).toMatchObject({
        kind: 'promotion',
        preparedPublicationVersionId: fx.versions.v1,
        sourceTargetId: fx.preview.targetId,
        stopAfter: true,
      });
      // Preparation keeps the current deployment running.
      expect(body.target).toMatchObject({ activeVersionId: fx.versions.v2, enabled: true });
    },
  },
  {
    action: 'prepare-rollback',
    revisioned: (fx) => fx.prod,
    build: (fx) => ({ targetId: fx.prod.targetId, expectedRevision: fx.prod.revision, activationId: fx.firstActivationId }),
    required: ['targetId', 'expectedRevision', 'activationId'],
    check: (body, fx) => {
      expect(body.receipt.preparedPublicationVersionId).toBe(fx.versions.v1);
      // The editor's candidate is preserved; production keeps running v2.
      expect(body.target).toMatchObject({
        candidateVersionId: fx.versions.v3,
        activeVersionId: fx.versions.v2,
        prepared: { kind: 'rollback', restoreActivationId: fx.firstActivationId },
      });
    },
  },
  {
    action: 'publish',
    revisioned: (fx) => fx.prod,
    build: (fx) => ({ targetId: fx.prod.targetId, expectedRevision: fx.prod.revision, versionId: fx.versions.v3, requestId: randomUUID() }),
    required: ['targetId', 'expectedRevision', 'versionId', 'requestId'],
    check: async (body, fx) => {
      expect(body.target).toMatchObject({
        activeVersionId: fx.versions.v3,
        activeVersion: 3,
        enabled: true,
        approved: true,
        generation: 3,
      });
      expect(body.receipt).toMatchObject({ activationId: body.target.activeActivationId, generation: 3 });
      const wf = await http<WorkflowWithLinks>(stack.app, 'GET', `/api/v1/workflows/${fx.wfId}`, { token: stack.ws.token });
      expect(wf.body.workflow).toMatchObject({ status: 'deployed', activeVersionId: fx.versions.v3 });
    },
  },
  {
    action: 'stop',
    revisioned: (fx) => fx.preview,
    build: (fx) => ({ targetId: fx.preview.targetId, expectedRevision: fx.preview.revision }),
    required: ['targetId', 'expectedRevision'],
    check: (body, fx) => expect(body.target).toMatchObject({ enabled: false, activeVersionId: fx.versions.v1 }),
  },
  {
    action: 'configure-source',
    revisioned: (fx) => fx.preview,
    build: (fx) => ({
      expectedRevision: fx.preview.revision,
      source: { kind: 'rss', targetId: fx.preview.targetId, feedUrl: 'https://feeds.example.test/news.xml' },
    }),
    required: ['expectedRevision', 'source'],
    check: (body) => {
      expect(body.receipt.sourceId).toMatch(/^src_/);
      expect(body.target.sources.rss).toEqual([
        expect.objectContaining({
          id: body.receipt.sourceId,
          kind: 'rss',
          feedUrl: 'https://feeds.example.test/news.xml',
          intervalSeconds: 300,
          lastPolledAt: null,
          paused: false,
          error: null,
        }),
      ]);
    },
  },
];

describe.each(cases)('$action', (c) => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await fixture();
  });
  const payload = () => ({ action: c.action, ...c.build(fx) });

  test('a key without write and execute authority is 403 and changes nothing', async () => {
    const before = await snapshot(stack.app, fx.wfId);
    for (const token of [viewer.token, personal.token]) {
      const res = await change(stack.app, token, fx.wfId, payload());
      expect(res.status).toBe(403);
    }
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);
  });

  test('missing fields are 400 and change nothing', async () => {
    const before = await snapshot(stack.app, fx.wfId);
    for (const field of c.required) {
      const body: Record<string, unknown> = payload();
      delete body[field];
      const res = await change(stack.app, stack.ws.token, fx.wfId, body);
      expect([res.status, field]).toEqual([400, field]);
      expect(res.body.error).toMatch(/Invalid request body/);
    }
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);
  });

  if (c.revisioned) {
    test('a stale expectedRevision is 409 workflow_target_revision_conflict and changes nothing', async () => {
      const before = await snapshot(stack.app, fx.wfId);
      const stale = { ...payload(), expectedRevision: c.revisioned!(fx).revision - 1 };
      const res = await change(stack.app, stack.ws.token, fx.wfId, stale);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'workflow_target_revision_conflict', revision: c.revisioned!(fx).revision });
      expect(await snapshot(stack.app, fx.wfId)).toBe(before);
    });
  }

  test('success; the same key and change replays the receipt; another change or principal with that key is 409', async () => {
    const key = randomUUID();
    const body = payload();
    const first = await change(stack.app, stack.ws.token, fx.wfId, body, { key });
    expect(first.status).toBe(200);
    expect(first.body.receipt).toMatchObject({ id: expect.stringMatching(/^rcpt_/), action: c.action, workflowId: fx.wfId });
    await c.check?.(first.body, fx);
    const after = await snapshot(stack.app, fx.wfId);

    const replay = await change(stack.app, stack.ws.token, fx.wfId, body, { key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await snapshot(stack.app, fx.wfId)).toBe(after);

    const other =
      c.action === 'prepare-production'
        ? { action: 'create-preview', versionId: fx.versions.v1, name: 'Other' }
        : { action: 'prepare-production' };
    const different = await change(stack.app, stack.ws.token, fx.wfId, other, { key });
    expect(different.status).toBe(409);
    expect(different.body.code).toBe('idempotency_replay_mismatch');
    const otherPrincipal = await change(stack.app, member.token, fx.wfId, body, { key });
    expect(otherPrincipal.status).toBe(409);
    expect(otherPrincipal.body.code).toBe('idempotency_replay_mismatch');
    expect(await snapshot(stack.app, fx.wfId)).toBe(after);
  });
});

describe('request-git-review', () => {
  test('answers 409 SETUP_REQUIRED while no repository is configured; stale, missing and unauthorized as the others', async () => {
    const fx = await fixture();
    const before = await snapshot(stack.app, fx.wfId);
    const body = { action: 'request-git-review', targetId: fx.prod.targetId, expectedRevision: fx.prod.revision };
    const res = await change(stack.app, stack.ws.token, fx.wfId, body);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'SETUP_REQUIRED', error: expect.stringMatching(/No repository is configured/) });
    const stale = await change(stack.app, stack.ws.token, fx.wfId, { ...body, expectedRevision: fx.prod.revision - 1 });
    expect([stale.status, stale.body.code]).toEqual([409, 'workflow_target_revision_conflict']);
    expect((await change(stack.app, stack.ws.token, fx.wfId, { action: 'request-git-review', targetId: fx.prod.targetId })).status).toBe(
      400,
    );
    expect((await change(stack.app, viewer.token, fx.wfId, body)).status).toBe(403);
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);
  });
});

describe('the change envelope', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await fixture();
  });

  test('Idempotency-Key is required (header or idempotencyKey), confirm must be true, actions are known', async () => {
    const before = await snapshot(stack.app, fx.wfId);
    const noKey = await change(stack.app, stack.ws.token, fx.wfId, { action: 'prepare-production' }, { key: null });
    expect(noKey.status).toBe(400);
    expect(noKey.body).toMatchObject({
      code: 'idempotency_key_invalid',
      error: 'Idempotency-Key header or idempotencyKey field is required.',
    });
    for (const confirm of [false, 'yes']) {
      const res = await change(stack.app, stack.ws.token, fx.wfId, { action: 'prepare-production' }, { confirm });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/confirm: true is required/);
    }
    const unknown = await change(stack.app, stack.ws.token, fx.wfId, { action: 'delete-everything' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/change.action must be one of prepare-production, create-preview/);
    const conflicting = await change(stack.app, stack.ws.token, fx.wfId, { action: 'prepare-production' }, { key: 'a', bodyKey: 'b' });
    expect(conflicting.status).toBe(400);
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);

    // The body field works like the header, and replays like it.
    const key = randomUUID();
    const viaBody = await change(
      stack.app,
      stack.ws.token,
      fx.wfId,
      { action: 'create-preview', versionId: fx.versions.v2, name: 'Via body' },
      { key: null, bodyKey: key },
    );
    expect(viaBody.status).toBe(200);
    const again = await change(
      stack.app,
      stack.ws.token,
      fx.wfId,
      { action: 'create-preview', versionId: fx.versions.v2, name: 'Via body' },
      { key },
    );
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body.receipt).toEqual(viaBody.body.receipt);
    expect((await listTargets(stack.app, stack.ws.token, fx.wfId)).targets.filter((t) => t.name === 'Via body')).toHaveLength(1);
  });

  test('preview names are unique per workflow (case-insensitive) and never "Production"; Production cannot be renamed', async () => {
    for (const name of ['staging', 'PRODUCTION']) {
      const res = await change(stack.app, stack.ws.token, fx.wfId, { action: 'create-preview', versionId: fx.versions.v1, name });
      expect(res.status).toBe(409);
    }
    const prod = await production(stack.app, stack.ws.token, fx.wfId);
    const rename = await change(stack.app, stack.ws.token, fx.wfId, {
      action: 'rename-preview',
      targetId: prod.targetId,
      expectedRevision: prod.revision,
      name: 'Live',
    });
    expect(rename.status).toBe(400);
  });

  test('versions, destinations and activations of other workflows are 404', async () => {
    const other = await fixture();
    const before = await snapshot(stack.app, fx.wfId);
    const prod = await production(stack.app, stack.ws.token, fx.wfId);
    const attempts = [
      { action: 'create-preview', versionId: other.versions.v1, name: 'Foreign' },
      { action: 'restore-candidate', targetId: prod.targetId, expectedRevision: prod.revision, versionId: other.versions.v1 },
      { action: 'stop', targetId: other.preview.targetId, expectedRevision: other.preview.revision },
      { action: 'prepare-rollback', targetId: prod.targetId, expectedRevision: prod.revision, activationId: other.firstActivationId },
    ];
    for (const body of attempts) {
      const res = await change(stack.app, stack.ws.token, fx.wfId, body);
      expect([body.action, res.status]).toEqual([body.action, 404]);
    }
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);
  });

  test("save-connections refuses credential ids that are not the workspace's", async () => {
    const target = await targetById(stack.app, stack.ws.token, fx.wfId, fx.preview.targetId);
    const res = await change(stack.app, stack.ws.token, fx.wfId, {
      action: 'save-connections',
      targetId: target.targetId,
      expectedRevision: target.revision,
      bindings: { api: 'cred_nope' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/cred_nope/);
  });
});

describe('GET /workflows/{id}/targets', () => {
  test('every workflow has Production; a deploy is its publication (same deploy answer); history holds the latest 30, newest first', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token, graphReturning('h0'));
    const fresh = await listTargets(stack.app, stack.ws.token, wfId, true);
    expect(fresh).toEqual({
      workflowId: wfId,
      targets: [
        expect.objectContaining({
          kind: 'production',
          name: 'Production',
          revision: 1,
          enabled: false,
          candidateVersionId: null,
          activeVersionId: null,
          activeActivationId: null,
          generation: 0,
          approved: false,
          prepared: null,
          sources: { rss: [], ci: [], mailRoutes: [], errtracker: [], overlaps: [] },
        }),
      ],
      history: [],
    });
    const first = await deploy(wfId);
    const prod = await production(stack.app, stack.ws.token, wfId);
    expect(prod).toMatchObject({
      enabled: true,
      activeVersionId: first.synchronizedVersionId,
      candidateVersionId: first.synchronizedVersionId,
      activeVersion: 1,
      generation: 1,
      approved: false,
      revision: 2,
    });
    // Redeploying the same draft is no new publication.
    await deploy(wfId);
    expect((await production(stack.app, stack.ws.token, wfId)).generation).toBe(1);

    for (let i = 1; i <= 31; i++) {
      await patchGraph(wfId, `h${i}`);
      await deploy(wfId);
    }
    const { history } = await listTargets(stack.app, stack.ws.token, wfId, true);
    expect(history).toHaveLength(30);
    expect(history.map((h) => h.version)).toEqual(Array.from({ length: 30 }, (_, i) => 32 - i));
    expect(history[0]).toEqual({
      activationId: expect.stringMatching(/^act_/),
      targetId: prod.targetId,
      versionId: expect.any(String),
      version: 32,
      displayLabel: null,
      createdAt: expect.any(String),
      canPrepareRollback: false,
    });
    expect(history.slice(1).every((h) => h.canPrepareRollback)).toBe(true);
    expect((await listTargets(stack.app, stack.ws.token, wfId)).history).toBeUndefined();
    // Safe readers may list destinations too.
    expect((await http(stack.app, 'GET', targetsPath(wfId), { token: personal.token })).status).toBe(200);
  });

  test('PATCH status draft and disabled move Production with the workflow', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token, graphReturning('s'));
    await deploy(wfId);
    await http(stack.app, 'PATCH', `/api/v1/workflows/${wfId}`, { token: stack.ws.token, body: { status: 'disabled' } });
    expect(await production(stack.app, stack.ws.token, wfId)).toMatchObject({ enabled: false });
    await http(stack.app, 'PATCH', `/api/v1/workflows/${wfId}`, { token: stack.ws.token, body: { status: 'draft' } });
    expect(await production(stack.app, stack.ws.token, wfId)).toMatchObject({
      enabled: false,
      activeVersionId: null,
      activeActivationId: null,
    });
  });
});

describe('cross-workspace ids', () => {
  test("another workspace's key gets 404 on every destination route and changes nothing", async () => {
    const fx = await fixture();
    const other = await stack.workspace('Other');
    const otherCookie = await ownerCookie(stack.app, other);
    const before = await snapshot(stack.app, fx.wfId);
    expect((await http(stack.app, 'GET', targetsPath(fx.wfId), { token: other.token })).status).toBe(404);
    for (const body of cases.map((c) => ({ action: c.action, ...c.build(fx) }))) {
      const res = await change(stack.app, other.token, fx.wfId, body);
      expect([body.action, res.status, res.body.error]).toEqual([body.action, 404, 'Workflow not found']);
    }
    const preview = await http(stack.app, 'POST', `${targetsPath(fx.wfId)}/preview-publication`, {
      token: other.token,
      body: { targetId: fx.prod.targetId, expectedRevision: fx.prod.revision, versionId: fx.versions.v3, requestId: randomUUID() },
    });
    expect(preview.status).toBe(404);
    const approval = await http(stack.app, 'POST', `/api/workflows/${fx.wfId}/targets/${fx.prod.targetId}/approvals`, {
      cookie: otherCookie,
      body: { versionId: fx.versions.v3 },
    });
    expect(approval.status).toBe(404);
    // Its own workflow cannot reach this workflow's destinations either.
    const own = await createWorkflow(stack.app, other.token, graphReturning('x'));
    const ownApproval = await http(stack.app, 'POST', `/api/workflows/${own}/targets/${fx.prod.targetId}/approvals`, {
      cookie: otherCookie,
      body: { versionId: fx.versions.v3 },
    });
    expect(ownApproval.status).toBe(404);
    const exec = await http(stack.app, 'POST', `/api/v1/workflows/${own}/execute`, {
      token: other.token,
      body: { executionTargetId: fx.prod.targetId },
    });
    expect(exec.status).toBe(404);
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);
  });
});

describe('configure-source', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await fixture();
  });
  const ciGraph = (extra: NodeInput[] = []) => ({
    nodes: [{ id: 'build', type: 'ci', config: {} }, { id: 'out', type: 'transform', config: { expression: '"ci"' } }, ...extra],
    edges: [{ source: 'build', target: 'out' }, ...extra.map((n) => ({ source: 'out', target: n.id }))],
  });

  test('RSS needs a Start or plain Webhook trigger in the saved version: event_source_trigger_not_found', async () => {
    const preview = await targetById(stack.app, stack.ws.token, fx.wfId, fx.preview.targetId);
    const saved = await changed(stack.app, stack.ws.token, fx.wfId, {
      action: 'save-candidate',
      targetId: preview.targetId,
      expectedRevision: preview.revision,
      name: 'CI only',
      ...ciGraph(),
    });
    const before = await snapshot(stack.app, fx.wfId);
    const res = await change(stack.app, stack.ws.token, fx.wfId, {
      action: 'configure-source',
      expectedRevision: saved.target.revision,
      source: { kind: 'rss', targetId: preview.targetId, feedUrl: 'https://feeds.example.test/a.xml' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('event_source_trigger_not_found');
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);
  });

  test('CI sources: the CI trigger node, a workspace credential, 1 to 50 jobs, interval 60 to 86400 (default 60); listed with jobStatuses', async () => {
    const preview = await targetById(stack.app, stack.ws.token, fx.wfId, fx.preview.targetId);
    const saved = await changed(stack.app, stack.ws.token, fx.wfId, {
      action: 'save-candidate',
      targetId: preview.targetId,
      expectedRevision: preview.revision,
      name: 'CI',
      ...ciGraph(),
    });
    const rev = saved.target.revision;
    const ci = (extra: Record<string, unknown>) => ({
      action: 'configure-source',
      expectedRevision: rev,
      source: { kind: 'ci', targetId: preview.targetId, nodeId: 'build', credentialId: fx.credentialId, jobs: ['api'], ...extra },
    });
    const before = await snapshot(stack.app, fx.wfId);
    for (const bad of [
      { jobs: [] },
      { jobs: Array.from({ length: 51 }, (_, i) => `j${i}`) },
      { intervalSeconds: 59 },
      { intervalSeconds: 86_401 },
      { results: ['MAYBE'] },
    ]) {
      expect((await change(stack.app, stack.ws.token, fx.wfId, ci(bad))).status).toBe(400);
    }
    const wrongNode = await change(stack.app, stack.ws.token, fx.wfId, ci({ nodeId: 'out' }));
    expect([wrongNode.status, wrongNode.body.code]).toEqual([400, 'event_source_trigger_not_found']);
    expect((await change(stack.app, stack.ws.token, fx.wfId, ci({ credentialId: 'cred_unknown' }))).status).toBe(400);
    expect(await snapshot(stack.app, fx.wfId)).toBe(before);

    const ok = await changed(stack.app, stack.ws.token, fx.wfId, ci({ jobs: ['api', 'web'], results: ['FAILURE'] }));
    expect(ok.target.sources.ci).toEqual([
      {
        id: ok.receipt.sourceId,
        kind: 'ci',
        targetId: preview.targetId,
        nodeId: 'build',
        credentialId: fx.credentialId,
        jobs: ['api', 'web'],
        results: ['FAILURE'],
        intervalSeconds: 60,
        lastPolledAt: null,
        paused: false,
        error: null,
        jobStatuses: {
          api: { baselineBuildNumber: null, lastSeenBuildNumber: null, omittedBuildCount: 0, paused: false, error: null },
          web: { baselineBuildNumber: null, lastSeenBuildNumber: null, omittedBuildCount: 0, paused: false, error: null },
        },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
    // The revision sent is now stale (the source changed the destination): not stored, 409.
    const stale = await change(stack.app, stack.ws.token, fx.wfId, ci({ jobs: ['other'] }));
    expect([stale.status, stale.body.code]).toEqual([409, 'workflow_target_revision_conflict']);
    expect((await targetById(stack.app, stack.ws.token, fx.wfId, preview.targetId)).sources.ci[0].jobs).toEqual(['api', 'web']);
  });

  test('a CI source is refused when the workflow would start a job it watches; a destination with a CI trigger cannot publish without its source', async () => {
    const preview = await targetById(stack.app, stack.ws.token, fx.wfId, fx.preview.targetId);
    const loop = ciGraph([{ id: 'kick', type: 'http', config: { method: 'POST', url: 'https://ci.example.test/job/deploy/build' } }]);
    const saved = await changed(stack.app, stack.ws.token, fx.wfId, {
      action: 'save-candidate',
      targetId: preview.targetId,
      expectedRevision: preview.revision,
      name: 'Loop',
      ...loop,
    });
    const res = await change(stack.app, stack.ws.token, fx.wfId, {
      action: 'configure-source',
      expectedRevision: saved.target.revision,
      source: { kind: 'ci', targetId: preview.targetId, nodeId: 'build', credentialId: fx.credentialId, jobs: ['deploy'] },
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/would start job/);

    const other = await createWorkflow(stack.app, stack.ws.token, graphReturning('o'));
    const prep = await changed(stack.app, stack.ws.token, other, { action: 'prepare-production' });
    const created = await changed(stack.app, stack.ws.token, other, {
      action: 'create-preview',
      versionId: prep.receipt.versionId,
      name: 'CI preview',
    });
    const ciSaved = await changed(stack.app, stack.ws.token, other, {
      action: 'save-candidate',
      targetId: created.target.targetId,
      expectedRevision: created.target.revision,
      name: 'CI',
      ...ciGraph(),
    });
    await approved(stack.app, cookie, other, ciSaved.target.targetId, ciSaved.target.candidateVersionId);
    const refused = await publishCandidate(stack.app, stack.ws.token, other, ciSaved.target);
    expect([refused.status, refused.body.code]).toEqual([409, 'event_source_required']);
    const withSource = await changed(stack.app, stack.ws.token, other, {
      action: 'configure-source',
      expectedRevision: ciSaved.target.revision,
      source: { kind: 'ci', targetId: ciSaved.target.targetId, nodeId: 'build', credentialId: fx.credentialId, jobs: ['api'] },
    });
    const published = await publishCandidate(stack.app, stack.ws.token, other, withSource.target);
    expect(published.status).toBe(200);
  });

  test('the same feed on two destinations shows as an overlap', async () => {
    const prod = await production(stack.app, stack.ws.token, fx.wfId);
    const preview = await targetById(stack.app, stack.ws.token, fx.wfId, fx.preview.targetId);
    const restored = await changed(stack.app, stack.ws.token, fx.wfId, {
      action: 'restore-candidate',
      targetId: preview.targetId,
      expectedRevision: preview.revision,
      versionId: fx.versions.v1,
    });
    const feedUrl = 'https://feeds.example.test/shared.xml';
    await changed(stack.app, stack.ws.token, fx.wfId, {
      action: 'configure-source',
      expectedRevision: restored.target.revision,
      source: { kind: 'rss', targetId: preview.targetId, feedUrl, intervalSeconds: 600 },
    });
    await changed(stack.app, stack.ws.token, fx.wfId, {
      action: 'configure-source',
      expectedRevision: prod.revision,
      source: { kind: 'rss', targetId: prod.targetId, feedUrl },
    });
    const view = await production(stack.app, stack.ws.token, fx.wfId);
    expect(view.sources.overlaps).toEqual([
      { kind: 'rss', key: feedUrl, sourceId: view.sources.rss[0].id, otherTargetIds: [preview.targetId] },
    ]);
  });
});
