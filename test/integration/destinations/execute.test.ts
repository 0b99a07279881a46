/**
 * Execute rules 2 and 3 with `executionTargetId`: live runs execute the destination's active
 * approved version and carry `run.executionTarget` (and the SvcTarget search attribute);
 * simulations run its candidate and keep its identity; foreign or unavailable destinations
 * never fall back to production (404/409, nothing run); the Idempotency-Key covers the
 * destination and the expected version.
 */
import { randomUUID } from 'node:crypto';
import { RunSchema } from '../../../db/entities';
import { addUserWithKey, createWorkspace, http, waitForRun } from '../../support/harness';
import { useTestStack } from '../../kit';
import {
  approved,
  changed,
  createWorkflow,
  graphReturning,
  ownerCookie,
  production,
  publishCandidate,
  publishedPreview,
  targetById,
} from './helpers';

const stack = useTestStack();
let cookie: string;

beforeAll(async () => {
  cookie = await ownerCookie(stack.app, stack.ws);
});

const execute = (wfId: string, body: Record<string, unknown>, opts: { key?: string; token?: string } = {}) =>
  http(stack.app, 'POST', `/api/v1/workflows/${wfId}/execute`, {
    token: opts.token ?? stack.ws.token,
    body,
    headers: opts.key ? { 'idempotency-key': opts.key } : {},
  });
const runCount = (workflowId: string) => stack.app.orm.em.fork().count(RunSchema, { workflowId });

/** Search attributes Temporal holds for a run's execution. */
async function searchAttributes(runId: string): Promise<Record<string, unknown>> {
  const description = await stack.app.deps.temporal.client.workflow.getHandle(runId).describe();
  return description.searchAttributes as Record<string, unknown>;
}

/** A workflow deployed at "prod" (legacy deploy) with a preview "Staging" published at "staged" under an approval. */
async function setup(): Promise<{ wfId: string; preview: any }> {
  const wfId = await createWorkflow(stack.app, stack.ws.token, graphReturning('prod'));
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${wfId}/deploy`, { token: stack.ws.token })).status).toBe(200);
  const preview = await publishedPreview(stack.app, stack.ws, cookie, wfId, 'Staging', graphReturning('staged'));
  return { wfId, preview };
}

describe('rule 2: live runs of a destination', () => {
  test('run its active approved version with run.executionTarget and SvcTarget; production runs stay production', async () => {
    const { wfId, preview } = await setup();
    const res = await execute(wfId, { executionTargetId: preview.targetId, input: { n: 1 } });
    expect(res.status).toBe(202);
    expect(res.body.run.executionTarget).toEqual({
      targetId: preview.targetId,
      kind: 'preview',
      name: 'Staging',
      activationId: preview.activeActivationId,
      generation: 1,
    });
    expect(res.body.execution).toMatchObject({
      target: 'active',
      versionId: preview.activeVersionId,
      destination: { targetId: preview.targetId, kind: 'preview', name: 'Staging', versionId: preview.activeVersionId, simulated: false },
    });
    const run = await waitForRun(stack.app, stack.ws.token, res.body.run.id);
    expect(run).toMatchObject({ status: 'succeeded', output: 'staged', versionId: preview.activeVersionId });
    expect((await searchAttributes(run.id)).SvcTarget).toEqual([`preview:${preview.targetId}`]);

    const plain = await execute(wfId, {});
    expect(plain.status).toBe(202);
    expect(plain.body.run.executionTarget).toBeUndefined();
    expect((await waitForRun(stack.app, stack.ws.token, plain.body.run.id)).output).toBe('prod');
    expect((await searchAttributes(plain.body.run.id)).SvcTarget).toEqual(['production']);
  });

  test('a Production published under an approval runs by executionTargetId too; a deploy without approval does not', async () => {
    const { wfId } = await setup();
    const prod = await production(stack.app, stack.ws.token, wfId);
    const unapproved = await execute(wfId, { executionTargetId: prod.targetId });
    expect([unapproved.status, unapproved.body.code]).toEqual([409, 'workflow_target_unavailable']);
    expect(unapproved.body.error).toMatch(/no current approval/);

    const saved = await changed(stack.app, stack.ws.token, wfId, {
      action: 'save-candidate',
      targetId: prod.targetId,
      expectedRevision: prod.revision,
      name: 'Governed',
      ...graphReturning('governed'),
    });
    await approved(stack.app, cookie, wfId, prod.targetId, saved.target.candidateVersionId);
    expect((await publishCandidate(stack.app, stack.ws.token, wfId, saved.target)).status).toBe(200);
    const res = await execute(wfId, { executionTargetId: prod.targetId });
    expect(res.status).toBe(202);
    expect(res.body.run.executionTarget).toMatchObject({ targetId: prod.targetId, kind: 'production', name: 'Production', generation: 2 });
    expect((await waitForRun(stack.app, stack.ws.token, res.body.run.id)).output).toBe('governed');
    expect((await searchAttributes(res.body.run.id)).SvcTarget).toEqual(['production']);
  });

  test('unpublished, stopped, foreign and unknown destinations never fall back to production: 409 or 404, nothing run', async () => {
    const { wfId, preview } = await setup();
    const prep = await production(stack.app, stack.ws.token, wfId);
    const unpublished = await changed(stack.app, stack.ws.token, wfId, {
      action: 'create-preview',
      versionId: prep.activeVersionId,
      name: 'Draft preview',
    });
    const other = await setup();
    const otherWs = await createWorkspace(stack.app, 'Foreign');
    const before = await runCount(wfId);

    const notPublished = await execute(wfId, { executionTargetId: unpublished.target.targetId });
    expect([notPublished.status, notPublished.body.code]).toEqual([409, 'workflow_target_unavailable']);
    const foreign = await execute(wfId, { executionTargetId: other.preview.targetId });
    expect([foreign.status, foreign.body.error]).toEqual([404, 'Destination not found']);
    expect((await execute(wfId, { executionTargetId: 'tgt_unknown' })).status).toBe(404);
    const live = await targetById(stack.app, stack.ws.token, wfId, preview.targetId);
    await changed(stack.app, stack.ws.token, wfId, { action: 'stop', targetId: live.targetId, expectedRevision: live.revision });
    const stopped = await execute(wfId, { executionTargetId: preview.targetId });
    expect([stopped.status, stopped.body.code]).toEqual([409, 'workflow_target_unavailable']);
    // Live candidate execution of a destination is not a thing: its active version runs live.
    const candidate = await execute(wfId, {
      executionTargetId: preview.targetId,
      target: 'candidate',
      dryRun: false,
      confirm: true,
      expectedVersionId: preview.candidateVersionId,
    });
    expect(candidate.status).toBe(400);
    const otherKey = await execute(wfId, { executionTargetId: preview.targetId }, { token: otherWs.token });
    expect(otherKey.status).toBe(403);
    expect(await runCount(wfId)).toBe(before);
    expect(await runCount(other.wfId)).toBe(0);
  });

  test('expectedVersionId must be the active version; a re-run runs only while the destination is live', async () => {
    const { wfId, preview } = await setup();
    const wrong = await execute(wfId, { executionTargetId: preview.targetId, expectedVersionId: 'wfv_other' });
    expect(wrong.status).toBe(409);
    const ok = await execute(wfId, { executionTargetId: preview.targetId, expectedVersionId: preview.activeVersionId });
    expect(ok.status).toBe(202);
    await waitForRun(stack.app, stack.ws.token, ok.body.run.id);
    const rerun = await http(stack.app, 'POST', `/api/v1/runs/${ok.body.run.id}/rerun`, { token: stack.ws.token });
    expect(rerun.status).toBe(201);
    expect(rerun.body.run.executionTarget).toMatchObject({ targetId: preview.targetId });
    expect((await waitForRun(stack.app, stack.ws.token, rerun.body.run.id)).output).toBe('staged');
    const live = await targetById(stack.app, stack.ws.token, wfId, preview.targetId);
    await changed(stack.app, stack.ws.token, wfId, { action: 'stop', targetId: live.targetId, expectedRevision: live.revision });
    const refused = await http(stack.app, 'POST', `/api/v1/runs/${ok.body.run.id}/rerun`, { token: stack.ws.token });
    expect([refused.status, refused.body.code]).toEqual([409, 'workflow_not_runnable']);
  });
});

describe('rule 2: simulations', () => {
  test("use the destination's candidate and keep its identity in execution.destination and run.simulationTargetId", async () => {
    const { wfId, preview } = await setup();
    const saved = await changed(stack.app, stack.ws.token, wfId, {
      action: 'save-candidate',
      targetId: preview.targetId,
      expectedRevision: preview.revision,
      name: 'Staging',
      ...graphReturning('next'),
    });
    const res = await execute(wfId, { executionTargetId: preview.targetId, dryRun: true });
    expect(res.status).toBe(201);
    expect(res.body.execution).toMatchObject({
      dryRun: true,
      resourceMode: 'simulated',
      target: 'candidate',
      versionId: saved.target.candidateVersionId,
      destination: { targetId: preview.targetId, simulated: true, versionId: saved.target.candidateVersionId },
    });
    expect(res.body.run).toMatchObject({ status: 'succeeded', output: 'next', simulationTargetId: preview.targetId, dryRun: true });
    expect(res.body.run.executionTarget).toBeUndefined();
    // target: candidate defaults to a simulation as well; an unpublished preview can be simulated.
    const created = await changed(stack.app, stack.ws.token, wfId, {
      action: 'create-preview',
      versionId: saved.target.candidateVersionId,
      name: 'Fresh',
    });
    const fresh = await execute(wfId, { executionTargetId: created.target.targetId, target: 'candidate' });
    expect(fresh.status).toBe(201);
    expect(fresh.body.run.simulationTargetId).toBe(created.target.targetId);
    const stale = await execute(wfId, { executionTargetId: preview.targetId, dryRun: true, expectedVersionId: preview.candidateVersionId });
    expect([stale.status, stale.body.code]).toEqual([409, 'workflow_candidate_changed']);
  });
});

describe('rule 3: idempotency covers destination and expected version', () => {
  test('another destination, expected version or principal with the same key is 409; the same request replays its receipt', async () => {
    const { wfId, preview } = await setup();
    const second = await publishedPreview(stack.app, stack.ws, cookie, wfId, 'Second', graphReturning('second'));
    const key = randomUUID();
    const first = await execute(wfId, { executionTargetId: preview.targetId, input: { a: 1 } }, { key });
    expect(first.status).toBe(202);
    const replay = await execute(wfId, { executionTargetId: preview.targetId, input: { a: 1 } }, { key });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.run.id).toBe(first.body.run.id);

    const otherDestination = await execute(wfId, { executionTargetId: second.targetId, input: { a: 1 } }, { key });
    expect(otherDestination.status).toBe(409);
    const otherVersion = await execute(
      wfId,
      { executionTargetId: preview.targetId, input: { a: 1 }, expectedVersionId: preview.activeVersionId },
      { key },
    );
    expect(otherVersion.status).toBe(409);
    const member = await addUserWithKey(stack.app, stack.ws, 'member');
    const otherPrincipal = await execute(wfId, { executionTargetId: preview.targetId, input: { a: 1 } }, { key, token: member.token });
    expect(otherPrincipal.status).toBe(409);
    await waitForRun(stack.app, stack.ws.token, first.body.run.id);
    expect(await runCount(wfId)).toBe(1);
  });
});
