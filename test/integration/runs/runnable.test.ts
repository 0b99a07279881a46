/**
 * The one runnable rule (services/workflows/runnable.ts) on every path that starts a run: execute,
 * webhook (invoke and outbox dispatch), schedule, subworkflow and rerun. A disabled or trashed
 * workflow runs nothing; a workflow moved to draft by import-replace keeps its active version
 * pinned but runs nothing live until deployed again. A deployed workflow is the control: every
 * path runs it, so each refusal below is the rule's doing and not a broken path.
 */
import { randomUUID } from 'node:crypto';
import { RunSchema, WebhookOutboxSchema } from '../../../db/entities';
import { dispatchOutbox } from '../../../services/webhooks';
import { TASK_QUEUE, WORKFLOW_TYPES } from '../../../temporal/shared';
import { deployWebhook, useTestStack, waitRun, type QueuedReceipt, type Refusable, type RerunReceipt } from '../../kit';

// No outbox dispatcher: the test dispatches itself, after changing the workflow's state.
const stack = useTestStack();

const graph = {
  nodes: [
    { id: 'hook', type: 'webhook', config: {} },
    { id: 'echo', type: 'transform', config: { expression: '"ran"' } },
  ],
  edges: [{ source: 'hook', target: 'echo' }],
};
const runsOf = (workflowId: string) => stack.app.orm.em.fork().find(RunSchema, { workflowId }, { orderBy: { createdAt: 'asc' } });

type State = 'deployed' | 'disabled' | 'trashed' | 'draft after import-replace';

const changeTo: Record<State, object | null> = {
  deployed: null,
  disabled: { status: 'disabled' },
  trashed: { trashed: true },
  'draft after import-replace': { importJson: JSON.stringify({ name: 'Replaced', ...graph }) },
};

interface Fixture {
  workflowId: string;
  invoke: string;
  /** A live run made while the workflow was deployed, to re-run. */
  earlierRunId: string;
  /** Runs of the workflow once the fixture is ready; a refused path adds none. */
  runCount: number;
}

/** A deployed workflow with a webhook trigger, one finished run and one accepted webhook request, then moved to `state`. */
async function workflowIn(state: State): Promise<Fixture> {
  const { workflowId, webhookPath: invoke, deploy } = await deployWebhook(stack, { name: `Target ${state}`, ...graph });
  const executed = await stack.api.workflows.execute(workflowId, {});
  expect(executed.status).toBe(202);
  await waitRun(stack, executed.body.run.id);
  // Accepted while deployed; dispatched later, after the change.
  expect((await stack.as().post(invoke, { early: true })).status).toBe(202);

  const change = changeTo[state];
  if (change) expect((await stack.api.patch(`/api/v1/workflows/${workflowId}`, change)).status).toBe(200);
  if (state === 'draft after import-replace') {
    // The premise: import-replace moves the workflow to draft but keeps its active version.
    const wf = (await stack.api.workflows.get(workflowId)).body.workflow;
    expect(wf).toMatchObject({ status: 'draft', activeVersionId: deploy.synchronizedVersionId });
  }
  return { workflowId, invoke, earlierRunId: executed.body.run.id, runCount: (await runsOf(workflowId)).length };
}

/**
 * Runs dispatcher passes until no entry of the workflow is pending. The outbox is shared by
 * every test file of the run, and a pass takes the 100 oldest entries, so one may not reach ours.
 */
async function dispatchUntilHandled(workflowId: string) {
  for (let pass = 0; pass < 50; pass++) {
    await dispatchOutbox(stack.app.orm.em.fork(), stack.app.deps.services.runs.launcher);
    const entries = await stack.app.orm.em.fork().find(WebhookOutboxSchema, { workflowId }, { orderBy: { createdAt: 'asc' } });
    if (entries.every((e) => e.status !== 'pending')) return entries;
  }
  throw new Error(`outbox entries of ${workflowId} still pending after 50 dispatcher passes`);
}

describe.each<State>(['deployed', 'disabled', 'trashed', 'draft after import-replace'])('a %s workflow', (state) => {
  const runs = state === 'deployed';
  let fx: Fixture;
  beforeAll(async () => {
    fx = await workflowIn(state);
  });

  test(runs ? 'executes' : 'is refused by execute (400) and records no run', async () => {
    const res = await stack.api.workflows.execute(fx.workflowId, {});
    if (runs) {
      expect(res.status).toBe(202);
      await waitRun(stack, res.body.run.id);
      return;
    }
    expect(res.status).toBe(400);
    expect(await runsOf(fx.workflowId)).toHaveLength(fx.runCount);
  });

  test(
    runs
      ? 'is invoked through its webhook, and its accepted request is dispatched'
      : 'answers 404 on its webhook, and a request accepted earlier is never dispatched',
    async () => {
      const invoked = await stack.as().post(fx.invoke, { late: true });
      expect(invoked.status).toBe(runs ? 202 : 404);
      const before = (await runsOf(fx.workflowId)).length;
      const entries = await dispatchUntilHandled(fx.workflowId);
      if (runs) {
        expect(entries.map((e) => e.status)).toEqual(['dispatched', 'dispatched']);
        const after = await runsOf(fx.workflowId);
        expect(after.filter((r) => r.trigger === 'webhook')).toHaveLength(2);
        return;
      }
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ status: 'failed', runId: expect.any(String) });
      expect(await runsOf(fx.workflowId)).toHaveLength(before);
      expect(await stack.app.orm.em.fork().count(RunSchema, { id: entries[0].runId })).toBe(0);
    },
  );

  test(runs ? 'runs when its schedule fires' : 'records nothing when a schedule fires for it', async () => {
    // What a Temporal Schedule starts; fired by hand, since changing the state removes the schedule itself.
    const runId = `run_sched_test_${randomUUID()}`;
    const result = await stack.app.deps.temporal.client.workflow.execute(WORKFLOW_TYPES.scheduled, {
      taskQueue: TASK_QUEUE,
      workflowId: runId,
      args: [{ workspaceId: stack.ws.workspaceId, workflowId: fx.workflowId, nodeId: 'hook' }],
      workflowExecutionTimeout: '30 seconds',
    });
    if (runs) {
      expect(result).toMatchObject({ status: 'succeeded' });
      expect(await stack.app.orm.em.fork().findOne(RunSchema, { id: runId })).toMatchObject({ trigger: 'schedule', status: 'succeeded' });
      return;
    }
    expect(result).toEqual({ skipped: expect.any(String) });
    expect(await stack.app.orm.em.fork().count(RunSchema, { id: runId })).toBe(0);
  });

  test(runs ? 'runs as a subworkflow' : 'cannot run as a subworkflow: the node fails and no child run is recorded', async () => {
    const parent = await stack.api.workflows.create({
      name: `Parent of ${state}`,
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'sub', type: 'subworkflow', config: { workflowId: fx.workflowId } },
      ],
      edges: [{ source: 'start', target: 'sub' }],
    });
    const parentId = parent.body.workflow.id;
    expect((await stack.api.workflows.deploy(parentId)).status).toBe(200);
    const started = await stack.api.workflows.execute(parentId, {});
    expect(started.status).toBe(202);
    const done = await waitRun(stack, started.body.run.id);
    const children = await stack.app.orm.em.fork().find(RunSchema, { parentRunId: done.id });
    if (runs) {
      expect(done).toMatchObject({ status: 'succeeded', output: 'ran' });
      expect(children).toHaveLength(1);
      return;
    }
    expect(done).toMatchObject({ status: 'failed', errorNodeId: 'sub' });
    expect(done.error).toMatch(/cannot run/);
    expect(children).toHaveLength(0);
  });

  test(runs ? 'is re-run' : 'is refused by rerun (409) and records no run', async () => {
    const before = (await runsOf(fx.workflowId)).length;
    const res = await stack.api.post<Refusable<RerunReceipt>>(`/api/v1/runs/${fx.earlierRunId}/rerun`);
    if (runs) {
      expect(res.status).toBe(201);
      expect((await waitRun(stack, res.body.run.id)).status).toBe('succeeded');
      return;
    }
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/cannot be re-run/);
    expect(await runsOf(fx.workflowId)).toHaveLength(before);
  });
});

describe('rerunning a dry run', () => {
  test('is a 409 telling the caller to execute instead, and starts nothing', async () => {
    const created = await stack.api.workflows.create({ name: 'Dry', ...graph });
    const workflowId = created.body.workflow.id;
    const dry = await stack.api.post<QueuedReceipt>(`/api/v1/workflows/${workflowId}/execute`, { target: 'candidate', input: {} });
    expect(dry.status).toBe(201);
    expect(dry.body.run).toMatchObject({ dryRun: true, status: 'succeeded' });

    const res = await stack.api.post<Refusable<RerunReceipt>>(`/api/v1/runs/${dry.body.run.id}/rerun`);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/dry run cannot be re-run.*Execute the workflow/);
    expect(await runsOf(workflowId)).toHaveLength(1);
  });
});
