/**
 * The logs routes over real HTTP, PostgreSQL and Temporal: stats with known data, every
 * shared filter, sorts and limit clamping, JSON and CSV exports (headers, escaping), the
 * execution detail (timeline, node states, parent and child runs of a real subworkflow run,
 * 404 for foreign ids), safe projections for a viewer key, and the session route.
 */
import { LogLevel, RunLogSchema, RunSchema, RunStepSchema, type Run } from '../../../db/entities';
import { newId } from '../../../services/kernel/ids';
import type { z } from 'zod';
import type { executionDetailSchema, logExportSchema, logStatsSchema, sessionLogsSchema } from '../../../api/schemas/logs';
import { startTestWorker } from '../../support/harness';
import {
  addUserWithKey,
  chain,
  createWorkspace,
  node,
  signInCookie,
  useTestStack,
  waitRun,
  type FullProjection,
  type QueuedReceipt,
  type SafeProjection,
  type WorkspaceFixture,
} from '../../kit';

type LogStats = z.infer<typeof logStatsSchema>;
type LogExport = z.infer<typeof logExportSchema>;
type ExecutionDetail = z.infer<typeof executionDetailSchema>;
type SessionLogs = z.infer<typeof sessionLogsSchema>;
/** Each answer as its caller sees it: the owner's key the full runs, the viewer's the safe projection. */
type OwnerExport = Omit<LogExport, 'runs'> & { runs: Array<FullProjection<LogExport['runs'][number]>> };
type ViewerExport = Omit<LogExport, 'runs'> & { runs: Array<SafeProjection<LogExport['runs'][number]>> };
type OwnerDetail = Omit<ExecutionDetail, 'run'> & { run: FullProjection<ExecutionDetail['run']> };
type ViewerDetail = Omit<ExecutionDetail, 'run'> & { run: SafeProjection<ExecutionDetail['run']> };
type OwnerSessionLogs = { runs: Array<FullProjection<SessionLogs['runs'][number]>> };

/** No worker beside the app: the setup starts one for its subworkflow run only. */
const stack = useTestStack({ worker: false, workspaceName: 'Logs workspace' });
let other: WorkspaceFixture;
let viewer: { token: string };

const STATS = '/api/v1/logs/stats';
const EXPORT = '/api/v1/logs/export';
const EXEC = '/api/v1/logs/executions';
const WF = '/api/v1/workflows';
const T0 = Date.parse('2021-03-04T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const TRICKY_NAME = 'a,"b"\nc';

// Known runs of workflow `wfStats`, inserted directly for exact durations and costs.
const known = {} as Record<'r1' | 'r2' | 'r3' | 'r4' | 'r5' | 'r6', string>;
let wfStats: string;
let wfTricky: string;
let trickyRun: string;
let dryRunId: string;
let parentRunId: string;
let childRunId: string;
let otherRunId: string;

async function insertRun(
  workspaceId: string,
  fields: Partial<Run> & Pick<Run, 'workflowId' | 'status' | 'trigger' | 'createdAt'>,
): Promise<string> {
  const em = stack.app.orm.em.fork();
  const id = newId('run');
  const finishedAt = fields.durationMs != null ? new Date(fields.createdAt.getTime() + fields.durationMs) : null;
  em.create(RunSchema, {
    id,
    workspaceId,
    versionId: null,
    workflowName: 'Stats flow',
    input: { secret: 'input-7781' },
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
    startedAt: fields.createdAt,
    finishedAt,
    durationMs: null,
    updatedAt: fields.createdAt,
    ...fields,
  });
  await em.flush();
  return id;
}

async function insertLog(
  runId: string,
  workspaceId: string,
  seq: number,
  level: LogLevel,
  message: string,
  createdAt: Date,
  nodeId: string | null = null,
) {
  const em = stack.app.orm.em.fork();
  em.create(RunLogSchema, { id: `${runId}:${seq}`, runId, workspaceId, seq, nodeId, level, message, data: null, createdAt });
  await em.flush();
}

const stats = (query = '', token = stack.ws.token) => stack.as(token).get<LogStats>(`${STATS}${query}`);
const exportJson = <T = OwnerExport>(query = '', token = stack.ws.token) => stack.as(token).get<T>(`${EXPORT}${query}`);
const execution = <T = OwnerDetail>(id: string, token = stack.ws.token) => stack.as(token).get<T>(`${EXEC}/${id}`);
const exportIds = async (query: string) => {
  const res = await exportJson(query);
  expect(res.status).toBe(200);
  return res.body.runs.map((r) => r.id);
};

beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other logs workspace');
  viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');

  const created = await stack.api.workflows.create({ name: 'Stats flow' });
  expect(created.status).toBe(201);
  wfStats = created.body.workflow.id;
  const w = wfStats;
  known.r1 = await insertRun(stack.ws.workspaceId, {
    workflowId: w,
    status: 'succeeded',
    trigger: 'api',
    createdAt: at(1),
    durationMs: 100,
    costCredits: 1,
  });
  known.r2 = await insertRun(stack.ws.workspaceId, {
    workflowId: w,
    status: 'succeeded',
    trigger: 'webhook',
    createdAt: at(2),
    durationMs: 200,
    costCredits: 2,
  });
  known.r3 = await insertRun(stack.ws.workspaceId, {
    workflowId: w,
    status: 'failed',
    trigger: 'api',
    createdAt: at(3),
    durationMs: 300,
    costCredits: 3,
    error: 'boom, "quoted"\nline two',
  });
  known.r4 = await insertRun(stack.ws.workspaceId, {
    workflowId: w,
    status: 'failed',
    trigger: 'schedule',
    createdAt: at(4),
    durationMs: 400,
    costCredits: 0.5,
    error: 'second failure',
  });
  known.r5 = await insertRun(stack.ws.workspaceId, {
    workflowId: w,
    status: 'running',
    trigger: 'manual',
    createdAt: at(5),
    finishedAt: null,
  });
  known.r6 = await insertRun(stack.ws.workspaceId, {
    workflowId: w,
    status: 'canceled',
    trigger: 'api',
    createdAt: at(6),
    durationMs: 500,
    costCredits: 0,
  });
  // r3 has two steps and logs; its error log makes it the only `level=error` run.
  const em = stack.app.orm.em.fork();
  for (const [seq, nodeId, status, start, end] of [
    [0, 'start', 'succeeded', 0, 50],
    [1, 'explode', 'failed', 100, 300],
  ] as const) {
    em.create(RunStepSchema, {
      id: `${known.r3}:${nodeId}`,
      runId: known.r3,
      workspaceId: stack.ws.workspaceId,
      nodeId,
      nodeType: nodeId === 'start' ? 'start' : 'fail',
      nodeName: null,
      seq,
      status,
      attempts: seq + 1,
      input: { stepIn: 1 },
      output: null,
      error: status === 'failed' ? 'step exploded' : null,
      startedAt: new Date(at(3).getTime() + start),
      finishedAt: new Date(at(3).getTime() + end),
      durationMs: end - start,
    });
  }
  await em.flush();
  await insertLog(known.r3, stack.ws.workspaceId, 0, 'info', 'starting up', new Date(at(3).getTime() + 20), 'start');
  await insertLog(known.r3, stack.ws.workspaceId, 1, 'error', 'secret-log-message-991', new Date(at(3).getTime() + 200), 'explode');
  await insertLog(known.r1, stack.ws.workspaceId, 0, 'warn', 'careful', new Date(at(1).getTime() + 10));

  const tricky = await stack.api.workflows.create({ name: 'Tricky flow' });
  wfTricky = tricky.body.workflow.id;
  trickyRun = await insertRun(stack.ws.workspaceId, {
    workflowId: wfTricky,
    workflowName: TRICKY_NAME,
    status: 'failed',
    trigger: 'email',
    createdAt: at(10),
    durationMs: 10,
    error: 'x,y',
  });

  // A real run: dry run of a candidate (instant, no worker).
  const dry = await stack.api.workflows.create({ name: 'Dry flow', ...chain(node.log('note', 'dry note')) });
  const dryRes = await stack.api.post<QueuedReceipt>(`${WF}/${dry.body.workflow.id}/execute`, { target: 'candidate', input: { q: 1 } });
  expect(dryRes.status).toBe(201);
  dryRunId = dryRes.body.run.id;

  // A real worker run with a subworkflow: parent and child runs.
  const worker = await startTestWorker(stack.app);
  try {
    const child = await stack.api.workflows.create({ name: 'Child flow', ...chain(node.transform('inc', '{ "v": v + 1 }')) });
    expect((await stack.api.workflows.deploy(child.body.workflow.id)).status).toBe(200);
    const parent = await stack.api.workflows.create({
      name: 'Parent flow',
      ...chain(node.of('subworkflow', 'sub', { workflowId: child.body.workflow.id, input: '={ "v": v * 2 }' })),
    });
    expect((await stack.api.workflows.deploy(parent.body.workflow.id)).status).toBe(200);
    const started = await stack.api.workflows.execute(parent.body.workflow.id, { v: 5 });
    expect(started.status).toBe(202);
    parentRunId = started.body.run.id;
    expect((await waitRun(stack, parentRunId)).status).toBe('succeeded');
    const children = await stack.api.runs.list(`?workflowId=${child.body.workflow.id}`);
    childRunId = children.body.runs.find((r) => r.parentRunId === parentRunId)!.id;
  } finally {
    await worker.stop();
  }

  const foreignWf = await stack.as(other.token).workflows.create({ name: 'Foreign' });
  otherRunId = await insertRun(other.workspaceId, {
    workflowId: foreignWf.body.workflow.id,
    status: 'failed',
    trigger: 'api',
    createdAt: at(2),
    durationMs: 9999,
    costCredits: 50,
  });
}, 120_000);

describe('GET /api/v1/logs/stats', () => {
  test('computes every field over the known runs', async () => {
    const res = await stats(`?workflowId=${wfStats}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['filters', 'generatedAt', 'stats', 'workspaceId']);
    expect(res.body.workspaceId).toBe(stack.ws.workspaceId);
    expect(Number.isNaN(Date.parse(res.body.generatedAt))).toBe(false);
    const s = res.body.stats;
    expect(s).toMatchObject({
      totalRuns: 6,
      failedRuns: 2,
      succeededRuns: 2,
      averageDurationMs: 300, // (100 + 200 + 300 + 400 + 500) / 5; the running run has none
      totalCostCredits: 6.5,
      successRate: 40, // 2 succeeded of 5 terminal (succeeded, failed, canceled)
      activeRuns: 1,
      p95DurationMs: 480, // percentile_cont over 100..500: 400 + 0.8 * 100
    });
    expect(s.statusBreakdown).toEqual([
      { status: 'failed', count: 2 },
      { status: 'succeeded', count: 2 },
      { status: 'canceled', count: 1 },
      { status: 'running', count: 1 },
    ]);
    expect(s.triggerBreakdown).toEqual([
      { trigger: 'api', count: 3 },
      { trigger: 'manual', count: 1 },
      { trigger: 'schedule', count: 1 },
      { trigger: 'webhook', count: 1 },
    ]);
    expect(s.slowestRuns.map((r) => r.id)).toEqual([known.r6, known.r4, known.r3, known.r2, known.r1]);
    expect(s.slowestRuns[0]).toMatchObject({
      id: known.r6,
      workflowId: wfStats,
      workflowName: 'Stats flow',
      status: 'canceled',
      trigger: 'api',
      durationMs: 500,
      costCredits: 0,
    });
    expect(s.slowestRuns[0].executionUrl).toBe(`${stack.app.url}${EXEC}/${known.r6}`);
    expect(s.recentFailures.map((r) => r.id)).toEqual([known.r4, known.r3]);
    expect(s.recentFailures[1].error).toBe('boom, "quoted"\nline two');
  });

  test('an empty selection gives zeros', async () => {
    const res = await stats(`?workflowId=wf_nothing`);
    expect(res.body.stats).toMatchObject({
      totalRuns: 0,
      failedRuns: 0,
      succeededRuns: 0,
      averageDurationMs: 0,
      totalCostCredits: 0,
      successRate: 0,
      activeRuns: 0,
      p95DurationMs: 0,
      statusBreakdown: [],
      triggerBreakdown: [],
      slowestRuns: [],
      recentFailures: [],
    });
  });

  test('covers only the workspace of the key, including real runs', async () => {
    const res = await stats();
    const s = res.body.stats;
    // 6 known + tricky + dry run + parent + child; the other workspace's run is not counted.
    expect(s.totalRuns).toBe(10);
    expect(s.slowestRuns.map((r) => r.id)).not.toContain(otherRunId);
    expect(s.totalCostCredits).toBeLessThan(50);
  });

  test('echoes active filters and null for empty or `all`', async () => {
    const res = await stats(`?status=all&trigger=&workflowId=all&level=&dateFrom=&dateTo=all&query=`);
    expect(res.status).toBe(200);
    expect(res.body.filters).toEqual({
      status: null,
      trigger: null,
      workflowId: null,
      level: null,
      dateFrom: null,
      dateTo: null,
      query: null,
      sort: 'newest',
      limit: 200,
    });
    const active = await stats(
      `?status=failed&trigger=api&workflowId=${wfStats}&level=error&dateFrom=2021-01-01T00:00:00Z&dateTo=2022-01-01&query=boom&sort=cost&limit=7`,
    );
    expect(active.body.filters).toEqual({
      status: 'failed',
      trigger: 'api',
      workflowId: wfStats,
      level: 'error',
      dateFrom: '2021-01-01T00:00:00Z',
      dateTo: '2022-01-01',
      query: 'boom',
      sort: 'cost',
      limit: 7,
    });
    expect(active.body.stats.totalRuns).toBe(1);
  });

  test('each filter narrows the aggregates', async () => {
    const total = async (q: string) => (await stats(q)).body.stats.totalRuns;
    expect(await total(`?workflowId=${wfStats}&status=failed`)).toBe(2);
    expect(await total(`?workflowId=${wfStats}&trigger=api`)).toBe(3);
    expect(await total(`?trigger=email`)).toBe(1);
    expect(await total(`?level=error`)).toBe(1);
    expect(await total(`?level=warn&workflowId=${wfStats}`)).toBe(1);
    expect(await total(`?dateFrom=${at(2).toISOString()}&dateTo=${at(4).toISOString()}`)).toBe(3);
    expect(await total(`?query=SECRET-LOG-message`)).toBe(1);
    // The limit caps the aggregated set (newest first): r6 and r5.
    const limited = await stats(`?workflowId=${wfStats}&limit=2`);
    expect(limited.body.stats).toMatchObject({ totalRuns: 2, activeRuns: 1, averageDurationMs: 500 });
  });

  test('invalid dates and enum values are 400', async () => {
    expect((await stats('?dateFrom=yesterday')).status).toBe(400);
    expect((await stats('?dateTo=2021-13-45')).status).toBe(400);
    expect((await stats('?status=exploded')).status).toBe(400);
    expect((await stats('?trigger=carrier-pigeon')).status).toBe(400);
    expect((await stats('?sort=random')).status).toBe(400);
  });

  test('needs a key', async () => {
    expect((await stack.as().get(STATS)).status).toBe(401);
  });
});

describe('GET /api/v1/logs/export', () => {
  test('JSON: shape, headers and filename', async () => {
    const res = await exportJson(`?workflowId=${wfStats}&format=json`);
    expect(res.status).toBe(200);
    const day = new Date().toISOString().slice(0, 10);
    expect(day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename=svc-logs-${stack.ws.workspaceId}-${day}.json`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['exportedAt', 'filters', 'runCount', 'runs', 'workspaceId']);
    expect(res.body).toMatchObject({ workspaceId: stack.ws.workspaceId, runCount: 6 });
    expect(res.body.filters.workflowId).toBe(wfStats);
    expect(res.body.runs).toHaveLength(6);
    const r3 = res.body.runs.find((r) => r.id === known.r3);
    expect(r3).toMatchObject({ input: { secret: 'input-7781' }, error: 'boom, "quoted"\nline two' });
    expect(r3?.steps).toHaveLength(2);
    expect(r3?.logs).toHaveLength(2);
    // anything other than csv is JSON
    const other = await exportJson(`?workflowId=${wfStats}&format=xml`);
    expect(other.headers.get('content-disposition')).toMatch(/\.json$/);
    expect(other.body.runCount).toBe(6);
  });

  test('sort values', async () => {
    const q = `?workflowId=${wfStats}&sort=`;
    const { r1, r2, r3, r4, r5, r6 } = known;
    expect(await exportIds(`?workflowId=${wfStats}`)).toEqual([r6, r5, r4, r3, r2, r1]);
    expect(await exportIds(`${q}newest`)).toEqual([r6, r5, r4, r3, r2, r1]);
    expect(await exportIds(`${q}oldest`)).toEqual([r1, r2, r3, r4, r5, r6]);
    expect(await exportIds(`${q}duration`)).toEqual([r6, r4, r3, r2, r1, r5]);
    expect(await exportIds(`${q}cost`)).toEqual([r3, r2, r1, r4, r6, r5]);
    expect(await exportIds(`${q}status`)).toEqual([r6, r4, r3, r5, r2, r1]);
    const byWorkflow = await exportJson(`?sort=workflow`);
    const names = byWorkflow.body.runs.map((r: { workflowName: string }) => r.workflowName.toLowerCase());
    expect(names).toEqual([...names].sort());
  });

  test('limit: default 200, clamped 1 to 200, non-numeric means the default', async () => {
    const limitOf = async (raw: string) => (await exportJson(`?workflowId=${wfStats}&limit=${raw}`)).body;
    expect((await limitOf('2')).runCount).toBe(2);
    expect((await limitOf('0')).filters.limit).toBe(1);
    expect((await limitOf('0')).runCount).toBe(1);
    expect((await limitOf('-5')).filters.limit).toBe(1);
    expect((await limitOf('500')).filters.limit).toBe(200);
    expect((await limitOf('abc')).filters.limit).toBe(200);
    expect((await limitOf('')).filters.limit).toBe(200);
    expect((await exportJson()).body.filters.limit).toBe(200);
  });

  test('CSV: exact header row, CRLF, RFC 4180 escaping', async () => {
    const res = await stack.api.get(`${EXPORT}?format=csv&workflowId=${wfTricky}`);
    expect(res.status).toBe(200);
    const day = new Date().toISOString().slice(0, 10);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename=svc-logs-${stack.ws.workspaceId}-${day}.csv`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const header =
      'run_id,workspace_id,workflow_id,workflow_name,status,trigger,started_at,finished_at,duration_ms,credits,step_count,log_count,error';
    expect(res.text).toBe(
      `${header}\r\n${trickyRun},${stack.ws.workspaceId},${wfTricky},"a,""b""\nc",failed,email,${at(10).toISOString()},${new Date(at(10).getTime() + 10).toISOString()},10,0,0,0,"x,y"\r\n`,
    );
  });

  test('CSV counts steps and logs and quotes errors with quotes and newlines', async () => {
    const res = await stack.api.get(`${EXPORT}?format=csv&workflowId=${wfStats}&status=failed&sort=oldest`);
    const lines = res.text.split('\r\n');
    expect(lines[0].split(',')).toHaveLength(13);
    expect(lines[1]).toBe(
      `${known.r3},${stack.ws.workspaceId},${wfStats},Stats flow,failed,api,${at(3).toISOString()},${new Date(at(3).getTime() + 300).toISOString()},300,3,2,2,"boom, ""quoted""\nline two"`,
    );
    expect(lines[2].endsWith(',400,0.5,0,0,second failure')).toBe(true);
    expect(lines[3]).toBe('');
    expect(lines).toHaveLength(4);
  });

  test('viewer keys get safe runs and an empty error column', async () => {
    const json = await exportJson<ViewerExport>(`?workflowId=${wfStats}&status=failed`, viewer.token);
    expect(json.status).toBe(200);
    for (const run of json.body.runs) {
      expect(run.redaction).toMatchObject({ applied: true, contractVersion: 'workspace-safe.v1' });
      expect(run).not.toHaveProperty('input');
      expect(run).not.toHaveProperty('error');
      expect(run).not.toHaveProperty('logs');
    }
    const csv = await stack.as(viewer.token).get(`${EXPORT}?format=csv&workflowId=${wfStats}&status=failed`);
    const rows = csv.text.split('\r\n').slice(1, -1);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.endsWith(',')).toBe(true);
    expect(csv.text).not.toContain('boom');
    // Safe readers cannot search restricted content.
    expect((await stats('?query=secret-log-message', viewer.token)).body.stats.totalRuns).toBe(0);
    const viewerStats = await stats(`?workflowId=${wfStats}`, viewer.token);
    expect(viewerStats.body.stats.totalRuns).toBe(6);
    expect(viewerStats.body.stats.recentFailures[0]).not.toHaveProperty('error');
  });
});

describe('GET /api/v1/logs/executions/{executionId}', () => {
  test('detail of a run with steps and logs: state, metadata, node states, typed timeline', async () => {
    const res = await execution(known.r3);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'executionId',
      'executionMetadata',
      'nodeRunStates',
      'relatedRuns',
      'run',
      'timeline',
      'workflowId',
      'workflowState',
    ]);
    expect(res.body).toMatchObject({ executionId: known.r3, workflowId: wfStats });
    expect(res.body.workflowState).toMatchObject({
      status: 'failed',
      active: false,
      terminal: true,
      waitCount: 0,
      stepCount: 2,
      failedStepCount: 1,
      lastNodeId: 'explode',
    });
    expect(res.body.executionMetadata).toMatchObject({
      trigger: 'api',
      versionId: null,
      durationMs: 300,
      costCredits: 3,
      startedAt: at(3).toISOString(),
      finishedAt: new Date(at(3).getTime() + 300).toISOString(),
      temporal: { workflowId: known.r3, namespace: 'default', taskQueue: 'workflow-runs' },
    });
    expect(res.body.nodeRunStates).toEqual({
      start: {
        status: 'succeeded',
        attempts: 1,
        startedAt: at(3).toISOString(),
        finishedAt: new Date(at(3).getTime() + 50).toISOString(),
        durationMs: 50,
      },
      explode: {
        status: 'failed',
        attempts: 2,
        startedAt: new Date(at(3).getTime() + 100).toISOString(),
        finishedAt: new Date(at(3).getTime() + 300).toISOString(),
        durationMs: 200,
      },
    });
    const timeline = res.body.timeline as Array<{ type: string; at: string; event?: string; nodeId?: string; message?: string }>;
    expect(timeline.map((e) => `${e.type}:${e.event ?? e.nodeId}`)).toEqual([
      'run:created',
      'run:started',
      'step:start',
      'log:start',
      'step:explode',
      'log:explode',
      'run:finished',
    ]);
    const times = timeline.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(timeline.find((e) => e.type === 'log' && e.nodeId === 'explode')!.message).toBe('secret-log-message-991');
    expect(res.body.run).toMatchObject({ id: known.r3, input: { secret: 'input-7781' }, error: 'boom, "quoted"\nline two' });
    expect(res.body.relatedRuns).toEqual({ childRuns: [] });
  });

  test('relatedRuns links a real subworkflow parent and child', async () => {
    const parent = await execution(parentRunId);
    expect(parent.status).toBe(200);
    expect(parent.body.relatedRuns.parentRun).toBeUndefined();
    expect(parent.body.relatedRuns.childRuns).toHaveLength(1);
    expect(parent.body.relatedRuns.childRuns[0]).toMatchObject({
      id: childRunId,
      parentNodeId: 'sub',
      status: 'succeeded',
      executionUrl: `${stack.app.url}${EXEC}/${childRunId}`,
    });
    expect(parent.body.nodeRunStates.sub).toMatchObject({ status: 'succeeded' });
    expect(parent.body.executionMetadata.temporal).toEqual({ workflowId: parentRunId, namespace: 'default', taskQueue: 'workflow-runs' });
    expect(parent.body.timeline.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['run', 'step']));
    const child = await execution(childRunId);
    expect(child.body.relatedRuns.parentRun).toMatchObject({ id: parentRunId, executionUrl: `${stack.app.url}${EXEC}/${parentRunId}` });
    expect(child.body.relatedRuns.childRuns).toEqual([]);
  });

  test('a dry run has log entries in its timeline and no Temporal execution', async () => {
    const res = await execution(dryRunId);
    expect(res.status).toBe(200);
    expect(res.body.executionMetadata).toMatchObject({ dryRun: true, temporal: null, costCredits: 0 });
    expect(new Set(res.body.timeline.map((e: { type: string }) => e.type))).toEqual(new Set(['run', 'step', 'log']));
  });

  test('missing and foreign executions are 404 Execution not found', async () => {
    const foreign = await execution(otherRunId);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'Execution not found' });
    const missing = await execution('run_does_not_exist');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'Execution not found' });
    expect((await execution(otherRunId, other.token)).status).toBe(200);
  });

  test('viewer keys get the safe run and log entries without messages', async () => {
    const res = await execution<ViewerDetail>(known.r3, viewer.token);
    expect(res.status).toBe(200);
    expect(res.body.run.redaction).toMatchObject({ applied: true });
    expect(res.body.run).not.toHaveProperty('input');
    expect(res.body.run).not.toHaveProperty('error');
    expect(res.body.run.steps[0]).not.toHaveProperty('input');
    const logs = res.body.timeline.filter((e) => e.type === 'log');
    expect(logs).toHaveLength(2);
    for (const entry of logs) expect(entry).not.toHaveProperty('message');
    expect(JSON.stringify(res.body)).not.toContain('secret');
    expect(JSON.stringify(res.body)).not.toContain('boom');
  });
});

describe('GET /api/logs (session)', () => {
  test('lists the session workspace runs with the shared filters', async () => {
    const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword, stack.ws.workspaceId);
    const res = await stack.as().get<OwnerSessionLogs>(`/api/logs?workflowId=${wfStats}&sort=oldest&status=all`, { cookie });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['runs']);
    expect(res.body.runs.map((r) => r.id)).toEqual([known.r1, known.r2, known.r3, known.r4, known.r5, known.r6]);
    const failed = await stack.as().get<OwnerSessionLogs>(`/api/logs?workflowId=${wfStats}&status=failed&limit=1`, { cookie });
    expect(failed.body.runs.map((r) => r.id)).toEqual([known.r4]);
    expect(failed.body.runs[0].error).toBe('second failure');
  });

  test('needs a session; a bearer key is not one', async () => {
    expect((await stack.as().get('/api/logs')).status).toBe(401);
    expect((await stack.api.get('/api/logs')).status).toBe(401);
  });
});
