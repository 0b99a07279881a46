/**
 * Governed publication: the session approval route (Admin or Owner, same origin), the approval
 * rules (none, wrong version, reactivation for rollbacks), promotion and rollback end to end
 * with history, stop and resume, preview-publication (read-only), and two publishes racing on
 * one revision: exactly one wins.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { workflowVersionSchema } from '../../../api/schemas/workflows';
import { addUserWithKey, http, signInCookie, useTestStack, type ApiError, type DeployResult, type WorkflowWithLinks } from '../../kit';
import {
  approve,
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
  type PublicationPreview,
  type WorkflowTarget,
} from './helpers';

type WorkflowVersion = z.infer<typeof workflowVersionSchema>;

// Routes only: publishing runs no workflow, so the stack has no worker.
const stack = useTestStack({ worker: false });
let cookie: string;

beforeAll(async () => {
  cookie = await ownerCookie(stack.app, stack.ws);
});

/** Saves `value`'s graph as Production's candidate; returns the destination after it. */
async function saveProduction(wfId: string, value: string): Promise<WorkflowTarget> {
  const prod = await production(stack.app, stack.ws.token, wfId);
  return (
    await changed(stack.app, stack.ws.token, wfId, {
      action: 'save-candidate',
      targetId: prod.targetId,
      expectedRevision: prod.revision,
      name: 'Governed',
      ...graphReturning(value),
    })
  ).target;
}

/** Approves and publishes a destination's candidate; returns the publish answer. */
async function approveAndPublish(wfId: string, target: WorkflowTarget, permitsReactivation?: boolean): Promise<ChangeResult> {
  await approved(stack.app, cookie, wfId, target.targetId, target.candidateVersionId, permitsReactivation);
  const res = await publishCandidate(stack.app, stack.ws.token, wfId, target);
  expect(res.status).toBe(200);
  return res.body;
}

const preview = (wfId: string, body: Record<string, unknown>, token = stack.ws.token) =>
  http<PublicationPreview>(stack.app, 'POST', `${targetsPath(wfId)}/preview-publication`, { token, body });

describe('the approval route', () => {
  test('needs an Admin or Owner session from the same origin; API keys cannot grant approval', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const prod = await saveProduction(wfId, 'a');
    const body = { versionId: prod.candidateVersionId };
    const path = `/api/workflows/${wfId}/targets/${prod.targetId}/approvals`;

    const withKey = await http<ApiError>(stack.app, 'POST', path, { token: stack.ws.token, body });
    expect(withKey.status).toBe(401);
    expect(withKey.body).toEqual({ error: 'Sign-in is required.' });
    const member = await addUserWithKey(stack.app, stack.ws, 'member');
    const memberCookie = await signInViaInvite(member.email);
    const asMember = await http<ApiError>(stack.app, 'POST', path, { cookie: memberCookie, body });
    expect(asMember.status).toBe(403);
    expect(asMember.body).toEqual({ error: 'Admin or Owner role required.' });
    const crossOrigin = await http<ApiError>(stack.app, 'POST', path, { cookie, body, headers: { origin: 'https://evil.example' } });
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.body).toEqual({ error: 'Cross-origin request refused.' });
    expect((await listTargets(stack.app, stack.ws.token, wfId)).targets[0].approved).toBe(false);

    await saveProduction(wfId, 'b'); // the candidate moves on: version "a" is no longer publishable here
    const notPrepared = await approve(stack.app, cookie, wfId, prod.targetId, prod.candidateVersionId);
    expect(notPrepared.status).toBe(409);
    const current = await production(stack.app, stack.ws.token, wfId);
    const ok = await approve(stack.app, cookie, wfId, prod.targetId, current.candidateVersionId, true);
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({
      approval: {
        id: expect.stringMatching(/^apr_/),
        workflowId: wfId,
        targetId: prod.targetId,
        versionId: current.candidateVersionId,
        version: current.candidateVersion,
        permitsReactivation: true,
        approvedBy: stack.ws.ownerId,
        createdAt: expect.any(String),
      },
    });
  });

  /** Members added by the fixture have no password; give this one a session through the services. */
  async function signInViaInvite(email: string): Promise<string> {
    const { hashPassword } = await import('../../../services/kernel/passwords');
    await stack.app.orm.em
      .fork()
      .getConnection()
      .execute(`update users set password_hash = ?, status = 'active' where email = ?`, [await hashPassword('member password 123'), email]);
    return signInCookie(stack.app, email, 'member password 123', stack.ws.workspaceId);
  }
});

describe('approval rules', () => {
  test('no approval: 409 workflow_target_approval_required and nothing changes', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const prod = await saveProduction(wfId, 'none');
    const before = await snapshot(stack.app, wfId);
    const res = await publishCandidate(stack.app, stack.ws.token, wfId, prod);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'workflow_target_approval_required',
      error: expect.stringMatching(/API calls cannot grant approval/),
    });
    expect(await snapshot(stack.app, wfId)).toBe(before);
  });

  test('an approval covers one exact version: another version, or a versionId other than the candidate, is refused', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const first = await saveProduction(wfId, 'one');
    await approved(stack.app, cookie, wfId, first.targetId, first.candidateVersionId);
    const second = await saveProduction(wfId, 'two');
    expect(second.candidateVersionId).not.toBe(first.candidateVersionId);
    const before = await snapshot(stack.app, wfId);
    const wrongVersion = await publishCandidate(stack.app, stack.ws.token, wfId, second);
    expect([wrongVersion.status, wrongVersion.body.code]).toEqual([409, 'workflow_target_approval_required']);
    const notCandidate = await publishCandidate(stack.app, stack.ws.token, wfId, second, { versionId: first.candidateVersionId });
    expect([notCandidate.status, notCandidate.body.code]).toEqual([409, 'workflow_candidate_changed']);
    expect(await snapshot(stack.app, wfId)).toBe(before);

    // An ordinary approval publishes once: after that version was replaced, it cannot bring it back.
    await approveAndPublish(wfId, second);
    const third = await saveProduction(wfId, 'three');
    await approveAndPublish(wfId, third);
    const prod = await production(stack.app, stack.ws.token, wfId);
    const restored = await changed(stack.app, stack.ws.token, wfId, {
      action: 'restore-candidate',
      targetId: prod.targetId,
      expectedRevision: prod.revision,
      versionId: second.candidateVersionId,
    });
    const again = await publishCandidate(stack.app, stack.ws.token, wfId, restored.target);
    expect([again.status, again.body.code]).toEqual([409, 'workflow_target_approval_required']);
  });

  test('requestId is a UUID and names one publication only', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const prod = await saveProduction(wfId, 'req');
    await approved(stack.app, cookie, wfId, prod.targetId, prod.candidateVersionId, true);
    expect((await publishCandidate(stack.app, stack.ws.token, wfId, prod, { requestId: 'not-a-uuid' })).status).toBe(400);
    const requestId = randomUUID();
    const first = await publishCandidate(stack.app, stack.ws.token, wfId, prod, { requestId });
    expect(first.status).toBe(200);
    expect(first.body.receipt.requestId).toBe(requestId);
    const next = await saveProduction(wfId, 'req2');
    await approved(stack.app, cookie, wfId, next.targetId, next.candidateVersionId);
    const reused = await publishCandidate(stack.app, stack.ws.token, wfId, next, { requestId });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatch(/requestId/);
  });
});

describe('promotion and rollback', () => {
  test('a preview is promoted to production: approval of that exact version, stopAfter stops the preview, history records it', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const v1 = await saveProduction(wfId, 'prod-1');
    await approveAndPublish(wfId, v1);
    const created = await changed(stack.app, stack.ws.token, wfId, {
      action: 'create-preview',
      versionId: v1.candidateVersionId,
      name: 'Staging',
    });
    const staged = await changed(stack.app, stack.ws.token, wfId, {
      action: 'save-candidate',
      targetId: created.target.targetId,
      expectedRevision: created.target.revision,
      name: 'Staging',
      ...graphReturning('staged'),
    });
    const stagingLive = (await approveAndPublish(wfId, staged.target)).target;
    expect(stagingLive).toMatchObject({ kind: 'preview', enabled: true, approved: true, generation: 1 });

    const prod = await production(stack.app, stack.ws.token, wfId);
    const prepared = await changed(stack.app, stack.ws.token, wfId, {
      action: 'prepare-promotion',
      sourceTargetId: stagingLive.targetId,
      sourceActivationId: stagingLive.activeActivationId,
      productionTargetId: prod.targetId,
      expectedRevision: prod.revision,
    });
    const promotedVersion = prepared.receipt.preparedPublicationVersionId;
    expect(promotedVersion).toBe(stagingLive.activeVersionId);
    // Preparation keeps the current deployment running.
    expect(prepared.target).toMatchObject({ activeVersionId: v1.candidateVersionId, enabled: true });

    const promote = (extra: Record<string, unknown> = {}) =>
      change(stack.app, stack.ws.token, wfId, {
        action: 'publish',
        targetId: prod.targetId,
        expectedRevision: prepared.target.revision,
        versionId: promotedVersion,
        requestId: randomUUID(),
        sourceTargetId: stagingLive.targetId,
        sourceActivationId: stagingLive.activeActivationId,
        ...extra,
      });
    // The preview's approval does not approve production.
    expect((await promote()).body.code).toBe('workflow_target_approval_required');
    await approved(stack.app, cookie, wfId, prod.targetId, promotedVersion);
    const wrongSource = await promote({ sourceActivationId: 'act_other' });
    expect(wrongSource.status).toBe(409);
    const published = await promote();
    expect(published.status).toBe(200);
    expect(published.body.receipt.stoppedTargetIds).toEqual([stagingLive.targetId]);
    expect(published.body.target).toMatchObject({ activeVersionId: promotedVersion, prepared: null, approved: true, generation: 2 });

    const { targets, history } = await listTargets(stack.app, stack.ws.token, wfId, true);
    expect(targets.find((t) => t.targetId === stagingLive.targetId)).toMatchObject({
      enabled: false,
      activeVersionId: promotedVersion,
    });
    expect(history.map((h) => [h.versionId, h.canPrepareRollback])).toEqual([
      [promotedVersion, false],
      [v1.candidateVersionId, true],
    ]);
    const wf = await http<WorkflowWithLinks>(stack.app, 'GET', `/api/v1/workflows/${wfId}`, { token: stack.ws.token });
    expect(wf.body.workflow).toMatchObject({ status: 'deployed', activeVersionId: promotedVersion });
  });

  test('stopAfter: false keeps the preview running', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const v1 = await saveProduction(wfId, 'keep-1');
    await approveAndPublish(wfId, v1);
    const created = await changed(stack.app, stack.ws.token, wfId, {
      action: 'create-preview',
      versionId: v1.candidateVersionId,
      name: 'Canary',
    });
    const live = (await approveAndPublish(wfId, created.target)).target;
    const prod = await production(stack.app, stack.ws.token, wfId);
    const prepared = await changed(stack.app, stack.ws.token, wfId, {
      action: 'prepare-promotion',
      sourceTargetId: live.targetId,
      sourceActivationId: live.activeActivationId,
      productionTargetId: prod.targetId,
      expectedRevision: prod.revision,
      stopAfter: false,
    });
    expect(prepared.target.prepared?.stopAfter).toBe(false);
    await approved(stack.app, cookie, wfId, prod.targetId, live.activeVersionId, true);
    const res = await change(stack.app, stack.ws.token, wfId, {
      action: 'publish',
      targetId: prod.targetId,
      expectedRevision: prepared.target.revision,
      versionId: live.activeVersionId,
      requestId: randomUUID(),
      sourceActivationId: live.activeActivationId,
    });
    expect(res.status).toBe(200);
    expect(res.body.receipt.stoppedTargetIds).toBeUndefined();
    expect((await targetById(stack.app, stack.ws.token, wfId, live.targetId)).enabled).toBe(true);
  });

  test('rollback: prepared without touching the candidate, published only under an approval that permits reactivation', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const v1 = await saveProduction(wfId, 'r1');
    await approveAndPublish(wfId, v1);
    const v2 = await saveProduction(wfId, 'r2');
    await approveAndPublish(wfId, v2);
    const v3 = await saveProduction(wfId, 'r3-draft'); // the editor's candidate, not published
    const { history } = await listTargets(stack.app, stack.ws.token, wfId, true);
    const firstActivation = history.find((h) => h.versionId === v1.candidateVersionId)!;
    expect(firstActivation.canPrepareRollback).toBe(true);

    const current = history[0];
    const refusedCurrent = await change(stack.app, stack.ws.token, wfId, {
      action: 'prepare-rollback',
      targetId: v3.targetId,
      expectedRevision: v3.revision,
      activationId: current.activationId,
    });
    expect(refusedCurrent.status).toBe(409);
    const prepared = await changed(stack.app, stack.ws.token, wfId, {
      action: 'prepare-rollback',
      targetId: v3.targetId,
      expectedRevision: v3.revision,
      activationId: firstActivation.activationId,
    });
    expect(prepared.receipt.preparedPublicationVersionId).toBe(v1.candidateVersionId);
    expect(prepared.target).toMatchObject({
      candidateVersionId: v3.candidateVersionId,
      activeVersionId: v2.candidateVersionId,
      enabled: true,
    });

    const rollback = () =>
      change(stack.app, stack.ws.token, wfId, {
        action: 'publish',
        targetId: v3.targetId,
        expectedRevision: prepared.target.revision,
        versionId: v1.candidateVersionId,
        requestId: randomUUID(),
        restoreActivationId: firstActivation.activationId,
      });
    // The approval v1 was first published under does not permit reactivation, nor does a new ordinary one.
    expect((await rollback()).body.code).toBe('workflow_target_approval_required');
    await approved(stack.app, cookie, wfId, v3.targetId, v1.candidateVersionId, false);
    const ordinary = await rollback();
    expect([ordinary.status, ordinary.body.code]).toEqual([409, 'workflow_target_approval_required']);
    expect(ordinary.body.error).toMatch(/permits reactivation/);
    await approved(stack.app, cookie, wfId, v3.targetId, v1.candidateVersionId, true);
    const rolledBack = await rollback();
    expect(rolledBack.status).toBe(200);
    expect(rolledBack.body.target).toMatchObject({
      activeVersionId: v1.candidateVersionId,
      candidateVersionId: v3.candidateVersionId,
      prepared: null,
      generation: 3,
    });

    const after = await listTargets(stack.app, stack.ws.token, wfId, true);
    expect(after.history.map((h) => h.versionId)).toEqual([v1.candidateVersionId, v2.candidateVersionId, v1.candidateVersionId]);
    expect(after.history.map((h) => h.canPrepareRollback)).toEqual([false, true, true]);
    const wf = await http<WorkflowWithLinks>(stack.app, 'GET', `/api/v1/workflows/${wfId}`, { token: stack.ws.token });
    expect(wf.body.workflow.activeVersionId).toBe(v1.candidateVersionId);
  });

  test('stop keeps the active pointer; resuming that activation needs no new approval; production stop undeploys the workflow', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const v1 = await saveProduction(wfId, 'stop');
    const published = await approveAndPublish(wfId, v1);
    const stopped = await changed(stack.app, stack.ws.token, wfId, {
      action: 'stop',
      targetId: v1.targetId,
      expectedRevision: published.target.revision,
    });
    expect(stopped.target).toMatchObject({ enabled: false, activeVersionId: v1.candidateVersionId });
    const exec = await http(stack.app, 'POST', `/api/v1/workflows/${wfId}/execute`, { token: stack.ws.token, body: {} });
    expect(exec.status).toBe(400);
    const again = await change(stack.app, stack.ws.token, wfId, {
      action: 'stop',
      targetId: v1.targetId,
      expectedRevision: stopped.target.revision,
    });
    expect(again.status).toBe(409);
    const resumed = await change(stack.app, stack.ws.token, wfId, {
      action: 'publish',
      targetId: v1.targetId,
      expectedRevision: stopped.target.revision,
      versionId: v1.candidateVersionId,
      requestId: randomUUID(),
      resumeActivationId: stopped.target.activeActivationId,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.target).toMatchObject({ enabled: true, activeActivationId: stopped.target.activeActivationId, generation: 1 });
    expect(
      (await http<WorkflowWithLinks>(stack.app, 'GET', `/api/v1/workflows/${wfId}`, { token: stack.ws.token })).body.workflow.status,
    ).toBe('deployed');
  });
});

describe('publish concurrency', () => {
  test('two publishes racing on one revision: exactly one wins, the other is 409 workflow_target_revision_conflict', async () => {
    for (let round = 0; round < 3; round++) {
      const wfId = await createWorkflow(stack.app, stack.ws.token);
      const prod = await saveProduction(wfId, `race-${round}`);
      await approved(stack.app, cookie, wfId, prod.targetId, prod.candidateVersionId, true);
      const results = await Promise.all([
        publishCandidate(stack.app, stack.ws.token, wfId, prod),
        publishCandidate(stack.app, stack.ws.token, wfId, prod),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(results.find((r) => r.status === 409)!.body.code).toBe('workflow_target_revision_conflict');
      const { history, targets } = await listTargets(stack.app, stack.ws.token, wfId, true);
      expect(history).toHaveLength(1);
      expect(targets[0]).toMatchObject({ generation: 1, revision: prod.revision + 1 });
    }
  });
});

describe('preview-publication', () => {
  test('reports readiness without writing; connections are credential references; publish revalidates', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token, {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'call', type: 'http', config: { method: 'GET', url: 'https://api.example.test/x', credentialId: 'billing' } },
        { id: 'child', type: 'subworkflow', config: { workflowId: 'wf_missing' } },
      ],
      edges: [
        { source: 'start', target: 'call' },
        { source: 'call', target: 'child' },
      ],
    });
    const prep = await changed(stack.app, stack.ws.token, wfId, { action: 'prepare-production' });
    const prod = prep.target;
    const fields = {
      targetId: prod.targetId,
      expectedRevision: prod.revision,
      versionId: prod.candidateVersionId,
      requestId: randomUUID(),
    };
    const before = await snapshot(stack.app, wfId);
    const first = await preview(wfId, fields);
    expect(first.status).toBe(200);
    expect(first.body.ready).toBe(false);
    const failed = first.body.checks.filter((c) => !c.ok).map((c) => c.name);
    expect(failed).toEqual(['approval', 'connections', 'dependencies']);
    expect(first.body.connections).toEqual([{ alias: 'billing', credentialId: null, nodeIds: ['call'], status: 'unbound' }]);
    expect(first.body.dependencies).toEqual([
      { nodeId: 'child', workflowId: 'wf_missing', targetId: null, ready: false, reason: expect.any(String) },
    ]);
    expect(first.body.warnings).toEqual([expect.stringMatching(/No repository/)]);
    expect(await snapshot(stack.app, wfId)).toBe(before);
    // Execute authority is needed; the action field is not accepted.
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    expect((await preview(wfId, fields, viewer.token)).status).toBe(403);
    expect((await preview(wfId, { ...fields, action: 'publish' })).status).toBe(400);

    // Bind the connection and deploy a child; approve: ready.
    const child = await createWorkflow(stack.app, stack.ws.token, graphReturning('child'), 'Child');
    expect((await http(stack.app, 'POST', `/api/v1/workflows/${child}/deploy`, { token: stack.ws.token })).status).toBe(200);
    const credentialId = await createCredential(stack.app, stack.ws);
    const graph = {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'call', type: 'http', config: { method: 'GET', url: 'https://api.example.test/x', credentialId: 'billing' } },
        { id: 'child', type: 'subworkflow', config: { workflowId: child } },
      ],
      edges: [
        { source: 'start', target: 'call' },
        { source: 'call', target: 'child' },
      ],
    };
    const saved = await changed(stack.app, stack.ws.token, wfId, {
      action: 'save-candidate',
      targetId: prod.targetId,
      expectedRevision: prod.revision,
      name: 'With child',
      ...graph,
    });
    const bound = await changed(stack.app, stack.ws.token, wfId, {
      action: 'save-connections',
      targetId: prod.targetId,
      expectedRevision: saved.target.revision,
      bindings: { billing: credentialId },
    });
    await approved(stack.app, cookie, wfId, prod.targetId, saved.target.candidateVersionId);
    const readyFields = {
      targetId: prod.targetId,
      expectedRevision: bound.target.revision,
      versionId: saved.target.candidateVersionId,
      requestId: randomUUID(),
    };
    const ready = await preview(wfId, readyFields);
    expect(ready.body.ready).toBe(true);
    expect(ready.body.connections).toEqual([{ alias: 'billing', credentialId, nodeIds: ['call'], status: 'bound' }]);
    expect(ready.body.dependencies).toEqual([
      { nodeId: 'child', workflowId: child, targetId: expect.stringMatching(/^tgt_/), ready: true, reason: null },
    ]);
    expect(JSON.stringify(ready.body)).not.toContain('token-0123456789');

    // Something changes between the preview and the publish: publish checks again.
    await http(stack.app, 'PATCH', `/api/v1/workflows/${child}`, { token: stack.ws.token, body: { status: 'draft' } });
    const publish = await change(stack.app, stack.ws.token, wfId, { action: 'publish', ...readyFields });
    expect([publish.status, publish.body.code]).toEqual([409, 'workflow_target_dependency_unavailable']);
    expect((await preview(wfId, readyFields)).body.ready).toBe(false);
  });
});

describe('the legacy deploy on top of destinations', () => {
  test('POST /deploy after a governed publish records a deploy activation without approval; history shows both', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const v1 = await saveProduction(wfId, 'gov');
    await approveAndPublish(wfId, v1);
    await http(stack.app, 'PATCH', `/api/v1/workflows/${wfId}`, { token: stack.ws.token, body: graphReturning('deployed') });
    const deployed = await http<DeployResult>(stack.app, 'POST', `/api/v1/workflows/${wfId}/deploy`, { token: stack.ws.token });
    expect(deployed.status).toBe(200);
    expect(Object.keys(deployed.body).sort()).toEqual([
      'links',
      'schedules',
      'synchronizedVersionId',
      'version',
      'webhookUrl',
      'webhooks',
      'workflow',
    ]);
    const prod = await production(stack.app, stack.ws.token, wfId);
    expect(prod).toMatchObject({
      activeVersionId: deployed.body.synchronizedVersionId,
      candidateVersionId: deployed.body.synchronizedVersionId,
      approved: false,
      generation: 2,
    });
    const stale = await publishCandidate(stack.app, stack.ws.token, wfId, v1);
    expect(stale.body.code).toBe('workflow_target_revision_conflict');
  });

  test('a deploy of the draft Production already pinned as its candidate reuses that version', async () => {
    const wfId = await createWorkflow(stack.app, stack.ws.token);
    const saved = await saveProduction(wfId, 'pinned');
    const deployed = await http<DeployResult>(stack.app, 'POST', `/api/v1/workflows/${wfId}/deploy`, { token: stack.ws.token });
    expect(deployed.status).toBe(200);
    expect(deployed.body.synchronizedVersionId).toBe(saved.candidateVersionId);
    const versions = await http<{ versions: WorkflowVersion[] }>(stack.app, 'GET', `/api/v1/workflows/${wfId}/versions`, {
      token: stack.ws.token,
    });
    expect(versions.body.versions.map((v) => [v.version, v.active, v.displayLabel])).toEqual([[1, true, null]]);
  });
});
