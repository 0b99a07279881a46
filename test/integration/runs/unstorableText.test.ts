/**
 * Issue 10, item 3: text PostgreSQL cannot store (U+0000, lone surrogates) never wedges a run.
 * API input carrying it is refused with a 400 that changes nothing; node outputs and logs
 * carrying it are stored with U+FFFD in its place and the run ends normally.
 */
import { RunLogSchema, RunSchema } from '../../../db/entities';
import { recordRunProgress } from '../../../services/runs';
import { http, waitForRun } from '../../support/harness';
import { useTestStack } from '../../kit';

const stack = useTestStack();

async function start(nodes: object[], edges: object[], input: unknown = {}): Promise<string> {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: { nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes], edges },
  });
  expect(created.status).toBe(201);
  const id = created.body.workflow.id;
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token })).status).toBe(200);
  const exec = await http(stack.app, 'POST', `/api/v1/workflows/${id}/execute`, { token: stack.ws.token, body: { input } });
  expect(exec.status).toBe(202);
  return exec.body.run.id;
}
const waiting = (kind: string) => (run: any) => run.status === 'waiting' && run.waits.some((w: { kind: string }) => w.kind === kind);

test('a code node returning a string with \\u0000 ends the run cleanly (stored with U+FFFD), not stuck in running', async () => {
  const runId = await start(
    [
      {
        id: 'code',
        type: 'code',
        config: {
          source: 'console.log("log\\u0000line", { k: "v\\u0000" }); return { text: "a\\u0000b", ["key\\u0000"]: 1, list: ["\\u0000"] };',
        },
      },
    ],
    [{ source: 'start', target: 'code' }],
  );
  const done = await waitForRun(stack.app, stack.ws.token, runId, undefined, 20_000);
  expect(done.status).toBe('succeeded');
  expect(done.output).toEqual({ text: 'a\ufffdb', 'key\ufffd': 1, list: ['\ufffd'] });
  const logs = await stack.app.orm.em.fork().find(RunLogSchema, { runId });
  expect(logs.length).toBeGreaterThan(0);
  expect(JSON.stringify(logs.map((l) => [l.message, l.data]))).not.toContain('\\u0000');
});

test('a code node returning lone surrogates ends the run cleanly, each one stored as U+FFFD', async () => {
  const runId = await start(
    [{ id: 'code', type: 'code', config: { source: 'return { high: "x\\ud800y", low: "\\udc00", pair: "\\ud83d\\ude00" };' } }],
    [{ source: 'start', target: 'code' }],
  );
  const done = await waitForRun(stack.app, stack.ws.token, runId, undefined, 20_000);
  expect(done.status).toBe('succeeded');
  expect(done.output).toEqual({ high: 'x\ufffdy', low: '\ufffd', pair: '\u{1F600}' });
});

test('a resume with "\\u0000" in the payload answers 400 naming the problem, and the token still works afterwards', async () => {
  const runId = await start([{ id: 'hook', type: 'event', config: {} }], [{ source: 'start', target: 'hook' }]);
  const parked = await waitForRun(stack.app, stack.ws.token, runId, waiting('event'));
  const path = new URL(parked.waits[0].resumeUrl).pathname;

  const refused = await http(stack.app, 'POST', path, { rawBody: '{"note":"a\\u0000b"}' });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatch(/body\.note contains a NUL character \(U\+0000\)/);
  const surrogate = await http(stack.app, 'POST', path, { rawBody: '{"note":"\\ud800"}' });
  expect(surrogate.status).toBe(400);
  expect(surrogate.body.error).toMatch(/lone UTF-16 surrogate/);
  const deep = await http(stack.app, 'POST', path, { rawBody: '['.repeat(4000) + ']'.repeat(4000) });
  expect(deep.status).toBe(400);

  const resumed = await http(stack.app, 'POST', path, { body: { note: 'fine' } });
  expect(resumed.status).toBe(202);
  const done = await waitForRun(stack.app, stack.ws.token, runId);
  expect(done.status).toBe('succeeded');
  expect(done.output).toEqual({ note: 'fine' });
});

test('an approval comment with \\u0000 answers 400 and the approval can still be decided', async () => {
  const runId = await start([{ id: 'gate', type: 'approval', config: { prompt: 'Ship?' } }], [{ source: 'start', target: 'gate' }]);
  await waitForRun(stack.app, stack.ws.token, runId, waiting('approval'));
  const refused = await http(stack.app, 'POST', `/api/runs/${runId}/approval`, {
    token: stack.ws.token,
    rawBody: '{"decision":"approved","comment":"ok\\u0000"}',
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatch(/comment contains a NUL character/);
  const decided = await http(stack.app, 'POST', `/api/runs/${runId}/approval`, {
    token: stack.ws.token,
    body: { decision: 'approved', comment: 'ok' },
  });
  expect(decided.status).toBe(200);
  expect((await waitForRun(stack.app, stack.ws.token, runId)).status).toBe('succeeded');
});

test('an execute input with \\u0000 answers 400 and starts no run', async () => {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: { nodes: [{ id: 'start', type: 'start', config: {} }], edges: [] },
  });
  const id = created.body.workflow.id;
  await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  const refused = await http(stack.app, 'POST', `/api/v1/workflows/${id}/execute`, {
    token: stack.ws.token,
    rawBody: '{"input":{"\\u0000":1}}',
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toMatch(/has a key that contains a NUL character/);
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId: id })).toBe(0);
});

test('the read-model write itself makes NUL and lone surrogates storable, so it never fails on them', async () => {
  const runId = await start([{ id: 'hook', type: 'event', config: {} }], [{ source: 'start', target: 'hook' }]);
  await waitForRun(stack.app, stack.ws.token, runId, waiting('event'));
  await recordRunProgress(stack.app.orm.em.fork(), {
    runId,
    workspaceId: stack.ws.workspaceId,
    at: new Date().toISOString(),
    run: { output: { text: 'x\u0000y' }, error: 'e\u0000' },
    steps: [],
    logs: [
      { seq: 9_000, nodeId: null, level: 'info', message: 'nul\u0000here', data: { k: '\ud800' }, createdAt: new Date().toISOString() },
    ],
  });
  const row = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { id: runId });
  expect(row.output).toEqual({ text: 'x\ufffdy' });
  expect(row.error).toBe('e\ufffd');
  const log = await stack.app.orm.em.fork().findOneOrFail(RunLogSchema, { runId, seq: 9_000 });
  expect([log.message, log.data]).toEqual(['nul\ufffdhere', { k: '\ufffd' }]);
});
