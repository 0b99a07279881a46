/** Schedule triggers become Temporal Schedules on deploy, are replaced on change and removed on undeploy. */
import { ScheduleNotFoundError } from '@temporalio/client';
import { RunSchema } from '../../../db/entities';
import { scheduleId } from '../../../temporal/schedulesClient';
import { http, waitForRun } from '../../support/harness';
import { useTestStack } from '../../kit';

const stack = useTestStack();

const graph = (cron: string, timezone = 'UTC') => ({
  nodes: [
    { id: 'tick', type: 'schedule', config: { cron, timezone } },
    { id: 'stamp', type: 'transform', config: { expression: '{ "at": scheduledAt }' } },
  ],
  edges: [{ source: 'tick', target: 'stamp' }],
});

test('deploy creates a Temporal Schedule that starts runs with trigger schedule; changes replace it; undeploy removes it', async () => {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', { token: stack.ws.token, body: graph('0 9 * * 1-5', 'Europe/Paris') });
  const id = created.body.workflow.id;
  const deployed = await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  expect(deployed.status).toBe(200);
  expect(deployed.body.schedules).toEqual([{ scheduleId: scheduleId(id, 'tick') }]);

  const handle = stack.app.deps.temporal.client.schedule.getHandle(scheduleId(id, 'tick'));
  const described = await handle.describe();
  expect(described.spec.timezone).toBe('Europe/Paris');
  expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledRunWorkflow', taskQueue: 'workflow-runs' });

  // Fire it now instead of waiting for the cron.
  await handle.trigger();
  const deadline = Date.now() + 20_000;
  let runs = await stack.app.orm.em.fork().find(RunSchema, { workflowId: id });
  while (runs.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    runs = await stack.app.orm.em.fork().find(RunSchema, { workflowId: id });
  }
  const run = await waitForRun(stack.app, stack.ws.token, runs[0].id);
  expect(run).toMatchObject({ status: 'succeeded', trigger: 'schedule', versionId: deployed.body.synchronizedVersionId });
  expect(run.output.at).toEqual(expect.any(String));
  const execution = await stack.app.deps.temporal.client.workflow.getHandle(run.id).describe();
  expect(execution.searchAttributes).toMatchObject({ WorkspaceId: [stack.ws.workspaceId], SvcWorkflowId: [id], SvcTrigger: ['schedule'] });

  // A changed cron replaces the schedule.
  await http(stack.app, 'PATCH', `/api/v1/workflows/${id}`, { token: stack.ws.token, body: graph('30 6 * * *') });
  await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  const replaced = await handle.describe();
  expect(replaced.spec.timezone).toBe('UTC');
  expect(JSON.stringify(replaced.spec)).toMatch(/"hour":\[\{"start":6/);

  // Disabling removes it.
  await http(stack.app, 'PATCH', `/api/v1/workflows/${id}`, { token: stack.ws.token, body: { status: 'disabled' } });
  await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  // Deploying again brings it back; trashing removes it again.
  await http(stack.app, 'PATCH', `/api/v1/workflows/${id}`, { token: stack.ws.token, body: { status: 'deployed' } });
  await expect(handle.describe()).resolves.toBeDefined();
  await http(stack.app, 'PATCH', `/api/v1/workflows/${id}`, { token: stack.ws.token, body: { trashed: true } });
  await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
});

test('deleting a deployed workflow removes its schedule', async () => {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', { token: stack.ws.token, body: graph('0 3 * * *') });
  const id = created.body.workflow.id;
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token })).status).toBe(200);
  const handle = stack.app.deps.temporal.client.schedule.getHandle(scheduleId(id, 'tick'));
  await expect(handle.describe()).resolves.toBeDefined();
  expect((await http(stack.app, 'DELETE', `/api/v1/workflows/${id}`, { token: stack.ws.token })).body).toEqual({ deleted: true });
  await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
});

test('an invalid cron or timezone blocks the deploy and creates no schedule', async () => {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', { token: stack.ws.token, body: graph('61 * * * *') });
  const res = await http(stack.app, 'POST', `/api/v1/workflows/${created.body.workflow.id}/deploy`, { token: stack.ws.token });
  expect(res.status).toBe(400);
  await expect(
    stack.app.deps.temporal.client.schedule.getHandle(scheduleId(created.body.workflow.id, 'tick')).describe(),
  ).rejects.toBeInstanceOf(ScheduleNotFoundError);
  const tz = await http(stack.app, 'POST', '/api/v1/workflows', { token: stack.ws.token, body: graph('0 9 * * *', 'Mars/Olympus') });
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${tz.body.workflow.id}/deploy`, { token: stack.ws.token })).status).toBe(400);
});
