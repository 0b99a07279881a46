/** The logs CSV export neutralizes spreadsheet formulas in free text (workflow names, errors); ids, numbers and dates stay as they are. */
import { RunSchema } from '../../../db/entities';
import { newId } from '../../../services/kernel/ids';
import { createWorkspace, http, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';

let app: TestApp;
let ws: WorkspaceFixture;

beforeAll(async () => {
  app = await startTestApp();
  ws = await createWorkspace(app, 'Formula logs');
});
afterAll(() => app?.close());

test('a run whose workflow name and error start with formula characters is exported with a leading quote', async () => {
  const wf = await http(app, 'POST', '/api/v1/workflows', { token: ws.token, body: { name: 'Formula flow' } });
  const createdAt = new Date('2021-05-06T07:08:09.000Z');
  const em = app.orm.em.fork();
  const id = newId('run');
  em.create(RunSchema, {
    id,
    workspaceId: ws.workspaceId,
    workflowId: wf.body.workflow.id,
    versionId: null,
    workflowName: '=HYPERLINK("http://evil.example","open")',
    status: 'failed',
    trigger: 'api',
    input: {},
    output: null,
    error: '@SUM(1+1)*cmd|calc',
    errorNodeId: null,
    startNodeId: null,
    dryRun: false,
    executionEvidence: { requestedTarget: 'active', versionId: null, resourceMode: 'workspace-live', reviewIdentity: null },
    waits: [],
    graphSnapshot: null,
    parentRunId: null,
    parentNodeId: null,
    costCredits: 0,
    cancelReason: null,
    createdByKeyId: null,
    createdByUserId: null,
    startedAt: createdAt,
    finishedAt: new Date(createdAt.getTime() + 5),
    durationMs: 5,
    createdAt,
    updatedAt: createdAt,
  });
  await em.flush();
  const res = await http(app, 'GET', `/api/v1/logs/export?format=csv&workflowId=${wf.body.workflow.id}`, { token: ws.token });
  expect(res.status).toBe(200);
  expect(res.text.split('\r\n')[1]).toBe(
    `${id},${ws.workspaceId},${wf.body.workflow.id},"'=HYPERLINK(""http://evil.example"",""open"")",failed,api,2021-05-06T07:08:09.000Z,2021-05-06T07:08:09.005Z,5,0,0,0,'@SUM(1+1)*cmd|calc`,
  );
  // JSON keeps the values as they are: neutralizing is for spreadsheets only.
  const json = await http(app, 'GET', `/api/v1/logs/export?workflowId=${wf.body.workflow.id}`, { token: ws.token });
  expect(json.body.runs[0]).toMatchObject({ workflowName: '=HYPERLINK("http://evil.example","open")', error: '@SUM(1+1)*cmd|calc' });
});
