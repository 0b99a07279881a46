/**
 * The graphs of stored versions are read once per API process (services/workflows/versionGraphs.ts).
 * A cached version is only ever served to its own workspace, and a new deploy is a new version.
 */
import { chain, deployWorkflow, node, useTestStack, waitRun, type WorkspaceFixture } from '../../kit';

const stack = useTestStack();
let other: WorkspaceFixture;

beforeAll(async () => {
  other = await stack.workspace('Other');
});

const activeVersionId = async (workflowId: string) =>
  (
    await stack.app.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ active_version_id: string }>>('select active_version_id from workflows where id = ?', [workflowId])
  )[0].active_version_id;

test('a cached version is never served to another workspace', async () => {
  const { workflowId } = await deployWorkflow(stack, chain(node.transform('say', '"first"')));
  const first = await stack.api.workflows.execute(workflowId);
  expect(first.status).toBe(202);
  const versionId = await activeVersionId(workflowId);
  const versions = stack.app.deps.services.runs.versions;
  // Cached now for its own workspace.
  expect((await versions.get(stack.app.orm.em.fork(), stack.ws.workspaceId, versionId)).id).toBe(versionId);

  // Another workspace's key is refused the workflow and gets no run, as before any cache.
  const foreign = await stack.as(other.token).workflows.execute(workflowId);
  expect(foreign.status).toBe(403);
  expect(foreign.body).toEqual({ error: 'API key cannot access this workflow' });
  const otherRuns = await stack.as(other.token).request<{ runs: unknown[] }>('GET', '/api/v1/runs');
  expect(otherRuns.body.runs).toEqual([]);

  // Even asked directly for that version id, the cache does not answer for another workspace.
  await expect(versions.get(stack.app.orm.em.fork(), other.workspaceId, versionId)).rejects.toThrow(/not found/i);
});

test('a deploy makes a new version, and the next run runs it', async () => {
  const body = chain(node.transform('say', '"v1"'));
  const { workflowId } = await deployWorkflow(stack, body);
  const v1 = await stack.api.workflows.execute(workflowId);
  expect((await waitRun(stack, v1.body.run.id)).output).toBe('v1');

  expect((await stack.api.workflows.update(workflowId, chain(node.transform('say', '"v2"')))).status).toBe(200);
  // Saving the draft changes nothing live; the deploy writes a new version.
  const draft = await stack.api.workflows.execute(workflowId);
  expect(draft.body.run.versionId).toBe(v1.body.run.versionId);
  expect((await stack.api.workflows.deploy(workflowId)).status).toBe(200);
  const v2 = await stack.api.workflows.execute(workflowId);
  expect(v2.body.run.versionId).toBe(await activeVersionId(workflowId));
  expect(v2.body.run.versionId).not.toBe(v1.body.run.versionId);
  expect((await waitRun(stack, v2.body.run.id)).output).toBe('v2');
});
