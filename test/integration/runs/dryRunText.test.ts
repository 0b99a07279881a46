/**
 * Issue 26, F8: a dry run whose code node returned `"x\u0000y"` or a lone surrogate answered 500
 * and left its run row `queued` for ever; enough such rows made run admission refuse every live
 * run of the workspace (503). Now the text is stored well-formed (U+FFFD), and a dry run whose
 * result cannot be recorded for any other reason still ends `failed` with the reason.
 */
import { RunSchema } from '../../../db/entities';
import { http } from '../../support/harness';
import { chain, deployWorkflow, useTestStack, type NodeInput } from '../../kit';

// Admission refuses a live run while 3 runs of the workspace are queued or running.
const stack = useTestStack({ config: { runAdmission: { maxActivePerWorkspace: 3, maxWaitMs: 300, recheckMs: 50 } }, worker: false });
stack.beforeClose(() =>
  stack.app.orm.em
    .getConnection()
    .execute('drop trigger if exists svc_test_refuse_marked_log on run_logs; drop function if exists svc_test_refuse_marked_log();'),
);

const deploy = async (nodes: NodeInput[]) => (await deployWorkflow(stack, chain(...nodes))).workflowId;

const dryRun = (workflowId: string) =>
  http(stack.app, 'POST', `/api/v1/workflows/${workflowId}/execute`, { token: stack.ws.token, body: { input: {}, dryRun: true } });

test.each([
  ['U+0000', 'return { s: "x\\u0000y" };', { s: 'x\ufffdy' }],
  ['a lone high surrogate', 'return { s: "x" + String.fromCharCode(0xd800) + "y" };', { s: 'x\ufffdy' }],
  ['a lone low surrogate in a key', 'return { ["k" + String.fromCharCode(0xdc00)]: 1 };', { 'k\ufffd': 1 }],
])('F8: a dry run whose code node returns %s answers 201 and stores the run finished, with U+FFFD', async (_what, source, expected) => {
  const res = await dryRun(
    await deploy([{ id: 'code', type: 'code', retry: { maxAttempts: 5, backoffSeconds: 0.5 }, config: { source } }]),
  );
  expect(res.status).toBe(201);
  expect(res.body.run.status).toBe('succeeded');
  expect(res.body.run.output).toEqual(expected);
  const row = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { id: res.body.run.id });
  expect([row.status, row.output]).toEqual(['succeeded', expected]);
});

test('F8: many such dry runs leave no run queued, so run admission still lets live runs in', async () => {
  const workflowId = await deploy([
    {
      id: 'code',
      type: 'code',
      retry: { maxAttempts: 5, backoffSeconds: 0.5 },
      config: { source: 'return "x\\u0000" + String.fromCharCode(0xd800);' },
    },
  ]);
  for (let i = 0; i < 5; i++) expect((await dryRun(workflowId)).status).toBe(201);
  expect(
    await stack.app.orm.em.fork().count(RunSchema, { workspaceId: stack.ws.workspaceId, status: { $in: ['queued', 'running'] } }),
  ).toBe(0);
  const live = await http(stack.app, 'POST', `/api/v1/workflows/${workflowId}/execute`, { token: stack.ws.token, body: { input: {} } });
  expect(live.status).toBe(202);
});

test('a dry run whose steps cannot be written ends failed with the reason, never queued and never a 500', async () => {
  // A real refusal by the database (the test's own trigger), as a full disk or a constraint would give.
  await stack.app.orm.em.getConnection().execute(`
    create or replace function svc_test_refuse_marked_log() returns trigger language plpgsql as $$
    begin
      if new.message like '%refuse-this-log-7c1%' then raise exception 'refused by the test trigger'; end if;
      return new;
    end $$;
    drop trigger if exists svc_test_refuse_marked_log on run_logs;
    create trigger svc_test_refuse_marked_log before insert on run_logs for each row execute function svc_test_refuse_marked_log();`);
  const res = await dryRun(await deploy([{ id: 'say', type: 'log', config: { level: 'info', message: 'refuse-this-log-7c1' } }]));
  expect(res.status).toBe(201);
  expect(res.body.run.status).toBe('failed');
  expect(res.body.run.error).toMatch(/^The dry run could not be recorded: .*refused by the test trigger/);
  const row = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { id: res.body.run.id });
  expect(row.status).toBe('failed');
  expect(row.finishedAt).not.toBeNull();
});
