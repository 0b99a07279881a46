/**
 * Issue 10 item 2: one transform expression must not kill the process or wedge a run. Each
 * reproduction fails its node with a message naming the limit (onError applies), in real runs
 * on the worker and in dry runs in the API process.
 */
import { failStuckRuns, NEVER_STARTED } from '../../../services/runs';
import { TASK_QUEUE, WORKFLOW_TYPES } from '../../../temporal/shared';
import { http } from '../../support/harness';
import { runWorkflow, useTestStack, type WorkflowBody } from '../../kit';

const stack = useTestStack();

const REPRODUCTIONS = [
  {
    name: '$pad with a 100,000,000 width',
    expression: "$length($pad('', 100000000))",
    message: /\$pad width 100000000 exceeds the string limit of 1048576 characters/,
  },
  // On RE2 this pattern matches in linear time: the run gets a result, not a stall.
  { name: 'a catastrophic-backtracking regex', expression: "$contains($pad('', 30, 'a') & '!', /(a+)+$/)", output: false },
  {
    name: 'a regex RE2 cannot run',
    expression: "$contains($pad('', 30, 'a') & '!', /(?=a)(a+)+$/)",
    message: /Unsupported regular expression .*RE2 syntax/,
  },
  { name: 'a doubling string', expression: "($f := function($s) { $f($s & $s) }; $f('a'))", message: /string longer than 1 MiB/ },
] as const;

function graph(expression: string, onError?: string) {
  return {
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'expr', type: 'transform', config: { expression }, ...(onError ? { onError } : {}) },
      { id: 'after', type: 'transform', config: { expression: '{ "after": true, "error": error.message }' } },
    ],
    edges: [
      { source: 'start', target: 'expr' },
      { source: 'expr', target: 'after' },
    ],
  };
}

const deployAndRun = async (body: WorkflowBody) => (await runWorkflow(stack, body, {}, { timeoutMs: 60_000 })).run;

async function dryRun(body: object): Promise<any> {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', { token: stack.ws.token, body });
  expect(created.status).toBe(201);
  const res = await http(stack.app, 'POST', `/api/v1/workflows/${created.body.workflow.id}/execute`, {
    token: stack.ws.token,
    body: { target: 'candidate', input: {} },
  });
  expect(res.status).toBe(201);
  return res.body.run;
}

describe.each(REPRODUCTIONS)('transform with $name', (repro) => {
  test('fails its node with the limit in the message (or succeeds in bounded time); onError: continue proceeds', async () => {
    const stopped = await deployAndRun(graph(repro.expression));
    const continued = await deployAndRun(graph(repro.expression, 'continue'));
    if ('message' in repro) {
      expect(stopped).toMatchObject({ status: 'failed', errorNodeId: 'expr', error: expect.stringMatching(repro.message) });
      expect(continued).toMatchObject({ status: 'succeeded', output: { after: true, error: expect.stringMatching(repro.message) } });
    } else {
      expect(stopped).toMatchObject({ status: 'succeeded', output: { after: true } });
      expect(stopped.steps.find((s: { nodeId: string }) => s.nodeId === 'expr')).toMatchObject({
        status: 'succeeded',
        output: repro.output,
      });
    }
  }, 120_000);

  test('a dry run in the API process ends by the expression bound with the same outcome', async () => {
    // Outcome, not wall clock: a dry run that ran into its own 30 s limit (SANDBOX_DRY_RUN_TIMEOUT_MS)
    // would end failed saying so, which matches neither the bound's message nor `succeeded`.
    const run = await dryRun(graph(repro.expression));
    if ('message' in repro)
      expect(run).toMatchObject({ status: 'failed', errorNodeId: 'expr', error: expect.stringMatching(repro.message) });
    else expect(run.status).toBe('succeeded');
  }, 60_000);
});

test('workflow-task failure guard: an error of the workflow code fails the execution with the reason instead of retrying for ever', async () => {
  // The API refuses unknown start nodes, so start the run workflow directly: the engine throws
  // outside any node, which used to fail the workflow task again on every retry.
  const client = stack.app.deps.temporal.client;
  const runId = `guard-${Date.now()}`;
  const handle = await client.workflow.start(WORKFLOW_TYPES.run, {
    taskQueue: TASK_QUEUE,
    workflowId: runId,
    workflowExecutionTimeout: '30 seconds',
    args: [
      {
        runId,
        workspaceId: stack.ws.workspaceId,
        workflowId: 'none',
        trigger: 'manual',
        graph: graph('1'),
        input: {},
        startNodeId: 'missing',
      },
    ],
  });
  await expect(handle.result()).rejects.toMatchObject({
    cause: {
      message: expect.stringMatching(/^Internal error in the run workflow: Start node "missing" does not exist/),
      type: 'RunInternalError',
    },
  });
}, 90_000);

test('stuck-run guard: a queued row whose execution was never started (its API process died in between) is recorded failed; started runs are left alone', async () => {
  const done = await deployAndRun(graph('1'));
  const orphanId = `run_orphan${Date.now()}`;
  // A copy of a real run row under an id Temporal has never seen, back to `queued`.
  await stack.app.deps.orm.em.fork().transactional(async (tx) => {
    await tx.execute(`create temp table orphan on commit drop as select * from runs where id = ?`, [done.id]);
    await tx.execute(
      `update orphan set id = ?, status = 'queued', finished_at = null, output = null, updated_at = now() - interval '1 hour'`,
      [orphanId],
    );
    await tx.execute(`insert into runs select * from orphan`);
  });
  await stack.app.deps.orm.em
    .getConnection()
    .execute(`update runs set status = 'queued', updated_at = now() - interval '1 hour' where id = ?`, [done.id]);

  const failed = await failStuckRuns(stack.app.deps.orm.em.fork(), stack.app.deps.services.runs.launcher, { staleMs: 0 });
  expect(failed).toContain(orphanId);
  expect(failed).not.toContain(done.id);
  const orphan = (await http(stack.app, 'GET', `/api/v1/runs/${orphanId}`, { token: stack.ws.token })).body.run;
  expect(orphan).toMatchObject({ status: 'failed', error: NEVER_STARTED });
}, 90_000);

test('workflow-task failure guard: a run whose workflow task keeps failing is terminated and recorded failed with the reason', async () => {
  // A run row, then an execution under its id whose every workflow task fails (a workflow type
  // the worker does not have stands in for non-determinism or an isolate timeout).
  const done = await deployAndRun(graph('1'));
  const runId: string = done.id;
  const client = stack.app.deps.temporal.client;
  // The run row turns terminal before its execution closes (a local activity writes it); a busy
  // machine can still be between the two, and the id is free for a new execution only after.
  await client.workflow.getHandle(runId).result();
  await stack.app.deps.orm.em
    .getConnection()
    .execute(`update runs set status = 'running', finished_at = null, updated_at = now() - interval '1 hour' where id = ?`, [runId]);
  await client.workflow.start('noSuchWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: runId,
    workflowExecutionTimeout: '2 minutes',
    args: [],
  });

  const deadline = Date.now() + 60_000;
  while (((await stack.app.deps.services.runs.launcher.failingWorkflowTask(runId))?.attempts ?? 0) < 2 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 500));
  expect(
    await failStuckRuns(stack.app.deps.orm.em.fork(), stack.app.deps.services.runs.launcher, { maxAttempts: 2, staleMs: 0 }),
  ).toContain(runId);

  const run = (await http(stack.app, 'GET', `/api/v1/runs/${runId}`, { token: stack.ws.token })).body.run;
  expect(run).toMatchObject({
    status: 'failed',
    error: expect.stringMatching(/^The run's workflow task failed \d+ times, so the run was stopped: .*noSuchWorkflow/),
  });
  expect((await client.workflow.getHandle(runId).describe()).status.name).toBe('TERMINATED');
  // Healthy and closed runs are left alone.
  expect(
    await failStuckRuns(stack.app.deps.orm.em.fork(), stack.app.deps.services.runs.launcher, { maxAttempts: 2, staleMs: 0 }),
  ).not.toContain(runId);
}, 120_000);
