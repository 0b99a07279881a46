/**
 * The spec's Limits table for logs stats and export: at most the 200 newest runs matching the
 * durable filters (status, trigger, workflowId, dates) are fetched; level, query, sort and
 * limit apply to that window only. 205 runs: the 5 oldest are the only ones named "needle"
 * and the oldest has the only error log, so filtering everything in one query would find them.
 */
import { RunLogSchema, RunSchema } from '../../../db/entities';
import { newId } from '../../../services/kernel/ids';
import type { z } from 'zod';
import type { logExportSchema, logStatsSchema } from '../../../api/schemas/logs';
import { useTestStack } from '../../kit';

type LogStats = z.infer<typeof logStatsSchema>;
type LogExport = z.infer<typeof logExportSchema>;

const stack = useTestStack({ worker: false, workspaceName: 'Logs window workspace' });
let workflowId: string;
const ids: string[] = []; // oldest first
const T0 = Date.parse('2022-05-06T08:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

beforeAll(async () => {
  const { app, ws } = stack;
  const created = await stack.api.workflows.create({ name: 'Window flow' });
  expect(created.status).toBe(201);
  workflowId = created.body.workflow.id;

  const em = app.orm.em.fork();
  for (let i = 0; i < 205; i++) {
    const id = newId('run');
    ids.push(id);
    em.create(RunSchema, {
      id,
      workspaceId: ws.workspaceId,
      workflowId,
      versionId: null,
      workflowName: i < 5 ? 'needle flow' : 'hay flow',
      status: 'succeeded',
      trigger: 'api',
      input: null,
      output: null,
      error: null,
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
      createdAt: at(i),
      startedAt: at(i),
      finishedAt: at(i),
      durationMs: 0,
      updatedAt: at(i),
    });
  }
  em.create(RunLogSchema, {
    id: `${ids[0]}:0`,
    runId: ids[0],
    workspaceId: ws.workspaceId,
    seq: 0,
    nodeId: null,
    level: 'error',
    message: 'old error',
    data: null,
    createdAt: at(0),
  });
  await em.flush();
}, 120_000);

const get = async <T>(path: string) => {
  const res = await stack.api.get<T>(path);
  expect(res.status).toBe(200);
  return res.body;
};

test('query and level see only the 200 newest runs: older matches are not counted or exported', async () => {
  expect((await get<LogStats>('/api/v1/logs/stats?query=needle')).stats.totalRuns).toBe(0);
  expect((await get<LogExport>('/api/v1/logs/export?query=needle')).runCount).toBe(0);
  expect((await get<LogStats>('/api/v1/logs/stats?level=error')).stats.totalRuns).toBe(0);
  expect((await get<LogStats>('/api/v1/logs/stats?query=hay')).stats.totalRuns).toBe(200);
});

test('durable filters choose the window, so they can bring older runs into it', async () => {
  const dateTo = encodeURIComponent(at(10).toISOString());
  expect((await get<LogStats>(`/api/v1/logs/stats?query=needle&dateTo=${dateTo}`)).stats.totalRuns).toBe(5);
  expect((await get<LogExport>(`/api/v1/logs/export?level=error&workflowId=${workflowId}&dateTo=${dateTo}`)).runs.map((r) => r.id)).toEqual(
    [ids[0]],
  );
});

test('sort and limit apply within the window: the oldest exported run is the oldest of the 200 newest', async () => {
  const body = await get<LogExport>('/api/v1/logs/export?sort=oldest&limit=1');
  expect(body.runs.map((r) => r.id)).toEqual([ids[5]]);
  expect((await get<LogStats>('/api/v1/logs/stats')).stats.totalRuns).toBe(200);
});
