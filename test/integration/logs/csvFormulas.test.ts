/** The logs CSV export neutralizes spreadsheet formulas in free text (workflow names, errors); ids, numbers and dates stay as they are. */
import { RunSchema } from '../../../db/entities';
import { newId } from '../../../services/kernel/ids';
import { http, useTestStack } from '../../kit';
import type { z } from 'zod';
import type { logExportSchema } from '../../../api/schemas/logs';

type LogExport = z.infer<typeof logExportSchema>;

const stack = useTestStack({ worker: false, workspaceName: 'Formula logs' });

test('a run whose workflow name and error start with formula characters is exported with a leading quote', async () => {
  const wf = await stack.api.workflows.create({ name: 'Formula flow' });
  const createdAt = new Date('2021-05-06T07:08:09.000Z');
  const em = stack.app.orm.em.fork();
  const id = newId('run');
  em.create(RunSchema, {
    id,
    workspaceId: stack.ws.workspaceId,
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
  const res = await http(stack.app, 'GET', `/api/v1/logs/export?format=csv&workflowId=${wf.body.workflow.id}`, { token: stack.ws.token });
  expect(res.status).toBe(200);
  expect(res.text.split('\r\n')[1]).toBe(
    `${id},${stack.ws.workspaceId},${wf.body.workflow.id},"'=HYPERLINK(""http://evil.example"",""open"")",failed,api,2021-05-06T07:08:09.000Z,2021-05-06T07:08:09.005Z,5,0,0,0,'@SUM(1+1)*cmd|calc`,
  );
  // JSON keeps the values as they are: neutralizing is for spreadsheets only.
  const json = await http<LogExport>(stack.app, 'GET', `/api/v1/logs/export?workflowId=${wf.body.workflow.id}`, { token: stack.ws.token });
  expect(json.body.runs[0]).toMatchObject({ workflowName: '=HYPERLINK("http://evil.example","open")', error: '@SUM(1+1)*cmd|calc' });
});
