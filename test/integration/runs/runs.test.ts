/**
 * The runs API over real HTTP, PostgreSQL and Temporal (a real worker executes the runs):
 * the filtered, sorted and clamped list, one run, projections by key, the workflow status
 * route, cancel through Temporal cancellation, re-run, and workspace isolation.
 */
import type { z } from 'zod';
import type {
  approvalResultSchema,
  runStatusReportSchema,
  safeRunSchema,
  safeRunSummarySchema,
  workflowRunsStatusSchema,
} from '../../../api/schemas/runs';
import { startTestApp, startTestWorker } from '../../support/harness';
import {
  addUserWithKey,
  createWorkspace,
  useTestStack,
  waitRun,
  chain,
  type BuiltGraph,
  type FullProjection,
  type Refusable,
  type Run,
  type RunLinks,
  type RunList,
  type RunWithLinks,
  type WorkspaceFixture,
} from '../../kit';

type SafeRun = z.infer<typeof safeRunSchema>;
/** What read-only keys (viewer, personal) get: the `workspace-safe.v1` projection. */
type SafeRunWithLinks = { run: SafeRun; links: RunLinks };
type SafeRunList = { runs: Array<z.infer<typeof safeRunSummarySchema>>; links: RunLinks[] };
type StatusReport = z.infer<typeof runStatusReportSchema>;
/** A member's status report: the full run. */
type FullStatusReport = Omit<StatusReport, 'run'> & { run: FullProjection<StatusReport['run']> };
type SafeStatusReport = Omit<StatusReport, 'run'> & { run: SafeRun };
type WorkflowRunsStatus = z.infer<typeof workflowRunsStatusSchema>;
type ApprovalResult = z.infer<typeof approvalResultSchema>;

const stack = useTestStack({
  // The fixtures' code nodes are trivial: a 4 s limit (inside the code activity's 6 s timeout) keeps a loaded machine from failing them.
  worker: { codeTimeoutMs: 4_000 },
  workspaceName: 'Runs workspace',
});
let other: WorkspaceFixture;

const RUNS = '/api/v1/runs';
const WF = '/api/v1/workflows';
const RUN_NOT_FOUND = { error: 'Run not found' };
const SAFE_RUN_REDACTION = {
  applied: true,
  projection: 'safe-content',
  contractVersion: 'workspace-safe.v1',
  restrictedFields: ['input', 'output', 'error', 'steps.input', 'steps.output', 'steps.error', 'logs'],
};
const TERMINAL = ['succeeded', 'failed', 'canceled'];

type Graph = BuiltGraph;

const GRAPHS = {
  plain: chain({ id: 'echo', type: 'transform', config: { expression: '{ "echo": $ }' } }),
  warn: chain({ id: 'careful', type: 'log', config: { level: 'warn', message: 'careful now' } }),
  failing: chain({ id: 'explode', type: 'fail', config: { message: 'kaboom-7731 went off' } }),
  approval: {
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'approval', type: 'approval', config: { prompt: 'Ship it?' } },
      { id: 'after', type: 'log', config: { level: 'info', message: 'approved' } },
    ],
    edges: [
      { id: 'e0', source: 'start', target: 'approval' },
      { id: 'e1', source: 'approval', target: 'after', sourceHandle: 'approved' },
    ],
  },
  // Retried: a live code activity has a 6 s start-to-close timeout, which a trivial node can
  // reach on a saturated machine (queue and sandbox start); the cost is counted once per node.
  costly: chain(
    {
      id: 'code1',
      type: 'code',
      config: { source: 'return { n: (input && input.n || 0) + 1 };' },
      retry: { maxAttempts: 3, backoffSeconds: 1 },
    },
    { id: 'code2', type: 'code', config: { source: 'return { n: input.n + 1 };' }, retry: { maxAttempts: 3, backoffSeconds: 1 } },
  ),
  // At least 6 s (a durable timer never fires early); other fixture runs may take as long on a loaded
  // machine, so the duration sort test checks the order of whatever durations came out.
  slow: chain({ id: 'pause', type: 'wait', config: { seconds: 6 } }),
  chatty: chain(...Array.from({ length: 22 }, (_, i) => ({ id: `log${i}`, type: 'log', config: { level: 'info', message: `line ${i}` } }))),
};

async function deployed(name: string, graph: Graph, token = stack.ws.token): Promise<string> {
  const created = await stack.as(token).workflows.create({ name, ...graph });
  expect(created.status).toBe(201);
  const id = created.body.workflow.id;
  const deploy = await stack.as(token).workflows.deploy(id);
  expect({ name, status: deploy.status }).toEqual({ name, status: 200 });
  return id;
}

async function execute(workflowId: string, input: unknown = {}, token = stack.ws.token): Promise<string> {
  const res = await stack.as(token).workflows.execute(workflowId, input);
  expect(res.status).toBe(202);
  return res.body.run.id;
}

const untilWaiting = (run: Run) => run.status === 'waiting';
/** GET /runs as `token`: typed as a member's list (`list<SafeRunList>` for read-only keys). */
const list = <T = Refusable<RunList>>(query = '', token = stack.ws.token) => stack.as(token).get<T>(`${RUNS}${query}`);
const ids = (res: { body: { runs: Array<{ id: string }> } }) => res.body.runs.map((r) => r.id);

/** Polls Temporal until the execution is no longer running; returns its status name. */
async function temporalStatusAfterClose(runId: string): Promise<string> {
  const handle = stack.app.deps.temporal.client.workflow.getHandle(runId);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const name = (await handle.describe()).status.name;
    if (name !== 'RUNNING' || Date.now() > deadline) return name;
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Workflows and runs of workspace `ws`, made once for the whole file.
const wf = {} as Record<keyof typeof GRAPHS, string>;
const run = {} as Record<'slow' | 'plain' | 'warn' | 'failing' | 'costly' | 'chatty' | 'waiting' | 'rerun', string>;
const NAMES: Record<keyof typeof GRAPHS, string> = {
  slow: 'Foxtrot sleeper',
  plain: 'alpha plain',
  warn: 'Bravo warner',
  failing: 'Charlie failer',
  costly: 'Echo costly',
  chatty: 'Golf chatty',
  approval: 'Delta approval',
};

beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other runs workspace');
  for (const key of Object.keys(GRAPHS) as Array<keyof typeof GRAPHS>) wf[key] = await deployed(NAMES[key], GRAPHS[key]);
  // Created one after the other (each settled before the next starts), so creation order is
  // known: slow is the oldest. Serial on purpose: see the concurrency test at the end.
  const settled = async (id: string, done?: (r: Run) => boolean) => (await waitRun(stack, id, { until: done }), id);
  run.slow = await settled(await execute(wf.slow, { kind: 'slow' }));
  run.plain = await settled(await execute(wf.plain, { customer: 'zebra-5521' }));
  run.warn = await settled(await execute(wf.warn, { kind: 'warn' }));
  run.failing = await settled(await execute(wf.failing, { kind: 'failing' }));
  run.costly = await settled(await execute(wf.costly, { n: 1 }));
  run.chatty = await settled(await execute(wf.chatty, { kind: 'chatty' }));
  run.waiting = await settled(await execute(wf.approval, { kind: 'approval' }), untilWaiting);
  const rerun = await stack.api.runs.rerun(run.plain);
  expect(rerun.status).toBe(201);
  run.rerun = rerun.body.run.id;
  await waitRun(stack, run.rerun);
}, 120_000);

describe('the runs fixtures', () => {
  test('ran as intended (guards the assumptions of the filter and sort tests)', async () => {
    const get = async (id: string) => (await stack.api.runs.get(id)).body.run;
    expect((await get(run.plain)).status).toBe('succeeded');
    expect((await get(run.failing)).status).toBe('failed');
    expect((await get(run.waiting)).status).toBe('waiting');
    expect((await get(run.costly)).costCredits).toBe(2);
    expect((await get(run.slow)).durationMs).toBeGreaterThanOrEqual(6000);
    expect((await get(run.rerun)).trigger).toBe('manual');
    expect((await get(run.plain)).trigger).toBe('api');
  });
});

describe('GET /api/v1/runs', () => {
  test('lists the workspace runs newest first, each with absolute links', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    const got = ids(res);
    for (const id of Object.values(run)) expect(got).toContain(id);
    const times = res.body.runs.map((r) => Date.parse(r.createdAt));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    expect(got[0]).toBe(run.rerun);
    expect(got[got.length - 1]).toBe(run.slow);
    expect(res.body.links).toHaveLength(res.body.runs.length);
    res.body.runs.forEach((r, i) => {
      const v1 = `${stack.app.url}/api/v1`;
      expect(res.body.links[i]).toEqual({
        run: `${v1}/runs/${r.id}`,
        execution: `${v1}/logs/executions/${r.id}`,
        status: `${v1}/workflows/${r.workflowId}/status?runId=${r.id}`,
        rerun: `${v1}/runs/${r.id}/rerun`,
        cancel: `${v1}/runs/${r.id}/cancel`,
      });
    });
  });

  test('never shows runs of another workspace', async () => {
    const res = await list('', other.token);
    expect(res.status).toBe(200);
    for (const id of Object.values(run)) expect(ids(res)).not.toContain(id);
    expect(res.text).not.toContain(stack.ws.workspaceId);
  });

  test.each([
    ['succeeded', ['plain', 'warn', 'costly', 'slow', 'chatty', 'rerun'], ['failing', 'waiting']],
    ['failed', ['failing'], ['plain', 'waiting']],
    ['waiting', ['waiting'], ['plain', 'failing']],
  ] as const)('status=%s', async (status, included, excluded) => {
    const res = await list(`?status=${status}`);
    expect(res.status).toBe(200);
    for (const r of res.body.runs) expect(r.status).toBe(status);
    for (const key of included) expect(ids(res)).toContain(run[key]);
    for (const key of excluded) expect(ids(res)).not.toContain(run[key]);
  });

  test('trigger filters by how the run started (api executions vs a manual re-run)', async () => {
    const manual = await list('?trigger=manual');
    expect(manual.status).toBe(200);
    expect(ids(manual)).toContain(run.rerun);
    for (const r of manual.body.runs) expect(r.trigger).toBe('manual');
    const api = await list('?trigger=api');
    expect(ids(api)).toContain(run.plain);
    expect(ids(api)).not.toContain(run.rerun);
    for (const r of api.body.runs) expect(r.trigger).toBe('api');
    expect(ids(await list('?trigger=webhook'))).toEqual([]);
  });

  test('workflowId filters by workflow', async () => {
    const res = await list(`?workflowId=${wf.plain}`);
    expect(res.status).toBe(200);
    expect(new Set(ids(res))).toEqual(new Set([run.plain, run.rerun]));
  });

  test('level keeps runs with a log line of that level', async () => {
    const warn = await list('?level=warn');
    expect(warn.status).toBe(200);
    expect(ids(warn)).toContain(run.warn);
    expect(ids(warn)).not.toContain(run.plain);
    expect(ids(warn)).not.toContain(run.failing);
    const error = await list('?level=error');
    expect(ids(error)).toContain(run.failing);
    expect(ids(error)).not.toContain(run.warn);
    expect(ids(error)).not.toContain(run.plain);
  });

  test('dateFrom and dateTo bound the creation time, inclusively', async () => {
    const pivot = (await stack.api.runs.get(run.failing)).body.run;
    const from = await list(`?dateFrom=${encodeURIComponent(pivot.createdAt)}`);
    expect(from.status).toBe(200);
    expect(ids(from)).toEqual(expect.arrayContaining([run.failing, run.costly, run.chatty, run.waiting, run.rerun]));
    expect(ids(from)).not.toContain(run.plain);
    expect(ids(from)).not.toContain(run.slow);
    for (const r of from.body.runs) expect(Date.parse(r.createdAt)).toBeGreaterThanOrEqual(Date.parse(pivot.createdAt));

    const to = await list(`?dateTo=${encodeURIComponent(pivot.createdAt)}`);
    expect(to.status).toBe(200);
    expect(ids(to)).toEqual(expect.arrayContaining([run.slow, run.plain, run.warn, run.failing]));
    expect(ids(to)).not.toContain(run.costly);
    expect(ids(to)).not.toContain(run.rerun);
    for (const r of to.body.runs) expect(Date.parse(r.createdAt)).toBeLessThanOrEqual(Date.parse(pivot.createdAt));

    const both = await list(`?dateFrom=${encodeURIComponent(pivot.createdAt)}&dateTo=${encodeURIComponent(pivot.createdAt)}`);
    expect(ids(both)).toEqual([run.failing]);
  });

  test.each(['dateFrom', 'dateTo'])('an invalid %s is a 400', async (param) => {
    const res = await list(`?${param}=not-a-date`);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(param);
  });

  test.each([
    ['the workflow name (case-insensitively)', 'ALPHA PLAIN', ['plain', 'rerun'], ['warn', 'failing']],
    ['an error message', 'kaboom-7731', ['failing'], ['plain', 'warn']],
    ['a value in the input', 'zebra-5521', ['plain', 'rerun'], ['warn', 'failing', 'slow']],
  ] as const)('query matches %s', async (_what, text, included, excluded) => {
    const res = await list(`?query=${encodeURIComponent(text)}`);
    expect(res.status).toBe(200);
    for (const key of included) expect(ids(res)).toContain(run[key]);
    for (const key of excluded) expect(ids(res)).not.toContain(run[key]);
  });

  test('query treats LIKE wildcards literally', async () => {
    // Unescaped, `%` would match every run and `zebra_5521` / `zebra%5521` the `zebra-5521` input.
    for (const text of ['%', 'zebra_5521', 'zebra%5521']) {
      const res = await list(`?query=${encodeURIComponent(text)}`);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([]);
    }
  });

  test.each([
    ['status', 'all'],
    ['status', ''],
    ['trigger', 'all'],
    ['trigger', ''],
    ['level', 'all'],
    ['level', ''],
    ['workflowId', 'all'],
    ['workflowId', ''],
    ['query', ''],
    ['dateFrom', ''],
    ['dateTo', ''],
  ])('%s=%s means no filter', async (param, value) => {
    const unfiltered = await list();
    const res = await list(`?${param}=${value}`);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(ids(unfiltered));
  });

  test.each([
    ['status', 'bogus'],
    ['trigger', 'bogus'],
    ['level', 'bogus'],
    ['sort', 'bogus'],
  ])('%s=%s is a 400', async (param, value) => {
    expect((await list(`?${param}=${value}`)).status).toBe(400);
  });

  describe('sort', () => {
    test('newest is the default; oldest reverses it', async () => {
      const byDefault = ids(await list());
      expect(ids(await list('?sort=newest'))).toEqual(byDefault);
      const oldest = await list('?sort=oldest');
      expect(oldest.status).toBe(200);
      expect(ids(oldest)).toEqual([...byDefault].reverse());
    });

    test('duration: longest first, runs without a duration last', async () => {
      const res = await list('?sort=duration');
      expect(res.status).toBe(200);
      const durations: Array<number | null> = res.body.runs.map((r) => r.durationMs ?? null);
      const firstNull = durations.indexOf(null);
      const known = (firstNull === -1 ? durations : durations.slice(0, firstNull)) as number[];
      if (firstNull !== -1) expect(durations.slice(firstNull).every((d) => d === null)).toBe(true);
      expect([...known].sort((x, y) => y - x)).toEqual(known);
      // The 6 s run is among the known durations, after none shorter (the sort above); it is first
      // unless a loaded machine made another run as long, which is not what this test is about.
      const slowAt = ids(res).indexOf(run.slow);
      expect(known[slowAt]).toBeGreaterThanOrEqual(6000);
      expect(known[0]).toBeGreaterThanOrEqual(known[slowAt]);
      expect(ids(res)[ids(res).length - 1]).toBe(run.waiting);
    });

    test('cost: most credits first', async () => {
      const res = await list('?sort=cost');
      expect(res.status).toBe(200);
      const costs: number[] = res.body.runs.map((r) => r.costCredits);
      expect([...costs].sort((x, y) => y - x)).toEqual(costs);
      expect(ids(res)[0]).toBe(run.costly);
    });

    test('workflow: by workflow name, case-insensitively', async () => {
      const res = await list('?sort=workflow');
      expect(res.status).toBe(200);
      const names: string[] = res.body.runs.map((r) => r.workflowName.toLowerCase());
      expect([...names].sort()).toEqual(names);
      expect(new Set(ids(res).slice(0, 2))).toEqual(new Set([run.plain, run.rerun]));
    });

    test('status: runs grouped by status', async () => {
      const res = await list('?sort=status');
      expect(res.status).toBe(200);
      const statuses: string[] = res.body.runs.map((r) => r.status);
      expect([...statuses].sort()).toEqual(statuses);
      expect(new Set(statuses)).toEqual(new Set(['succeeded', 'failed', 'waiting']));
    });
  });

  describe('limit', () => {
    let bulk: WorkspaceFixture;
    let bulkWorkflow: string;
    const TOTAL = 205;

    beforeAll(async () => {
      bulk = await createWorkspace(stack.app, 'Bulk runs');
      bulkWorkflow = await deployed('Bulk', GRAPHS.plain, bulk.token);
      // Dry runs of the candidate finish inline: a cheap way to have more runs than any limit.
      let made = 0;
      while (made < TOTAL) {
        const batch = Math.min(10, TOTAL - made);
        const results = await Promise.all(
          Array.from({ length: batch }, (_, i) =>
            stack.as(bulk.token).post(`/api/v1/workflows/${bulkWorkflow}/execute`, { target: 'candidate', input: { i: made + i } }),
          ),
        );
        for (const r of results) expect(r.status).toBe(201);
        made += batch;
      }
    }, 120_000);

    test.each([
      ['', 100],
      ['?limit=abc', 100],
      ['?limit=0', 1],
      ['?limit=-5', 1],
      ['?limit=1', 1],
      ['?limit=37', 37],
      ['?limit=200', 200],
      ['?limit=1000', 200],
    ])('GET /runs%s returns %i runs', async (query, expected) => {
      const res = await list(query, bulk.token);
      expect(res.status).toBe(200);
      expect(res.body.runs).toHaveLength(expected);
      expect(res.body.links).toHaveLength(expected);
    });

    test('limit=1000 is the same page as limit=200', async () => {
      expect(ids(await list('?limit=1000', bulk.token))).toEqual(ids(await list('?limit=200', bulk.token)));
    });

    test('GET /workflows/{id}/status without runId gives the 20 latest runs and their statuses', async () => {
      const res = await stack.as(bulk.token).get<WorkflowRunsStatus>(`/api/v1/workflows/${bulkWorkflow}/status`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['runs', 'statuses', 'workflow']);
      expect(res.body.workflow).toMatchObject({ id: bulkWorkflow, name: 'Bulk' });
      expect(res.body.runs).toHaveLength(20);
      expect(res.body.runs.map((r) => r.id)).toEqual(ids(await list(`?workflowId=${bulkWorkflow}&limit=20`, bulk.token)));
      expect(res.body.statuses).toMatchObject({ succeeded: 20, failed: 0, waiting: 0, queued: 0, running: 0, canceled: 0 });
    });
  });
});

describe('GET /api/v1/runs/{id} and projections', () => {
  test('returns { run, links }', async () => {
    const res = await stack.api.runs.get(run.plain);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['links', 'run']);
    expect(res.body.run).toMatchObject({
      id: run.plain,
      workspaceId: stack.ws.workspaceId,
      workflowId: wf.plain,
      workflowName: NAMES.plain,
      trigger: 'api',
      status: 'succeeded',
    });
    expect(res.body.links.run).toBe(`${stack.app.url}${RUNS}/${run.plain}`);
    expect(res.body.links.cancel).toBe(`${stack.app.url}${RUNS}/${run.plain}/cancel`);
  });

  test('an unknown run is a 404', async () => {
    const res = await stack.api.runs.get('run_missing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(RUN_NOT_FOUND);
  });

  test("a member's workspace key gets the full run", async () => {
    const member = await addUserWithKey(stack.app, stack.ws, 'member');
    const res = await stack.as(member.token).runs.get(run.plain);
    expect(res.status).toBe(200);
    const full = res.body.run;
    expect(full).not.toHaveProperty('redaction');
    expect(full.input).toEqual({ customer: 'zebra-5521' });
    expect(full.output).toEqual({ echo: { customer: 'zebra-5521' } });
    const echo = full.steps.find((s) => s.nodeId === 'echo');
    expect(echo).toMatchObject({ status: 'succeeded', input: { customer: 'zebra-5521' }, output: { echo: { customer: 'zebra-5521' } } });
    expect(full.logs.length).toBeGreaterThan(0);
    expect(full.executionEvidence).toMatchObject({ requestedTarget: 'active', resourceMode: 'workspace-live' });

    const failed = (await stack.as(member.token).runs.get(run.failing)).body.run;
    expect(failed.error).toContain('kaboom-7731');
    expect(failed.steps.find((s) => s.nodeId === 'explode')?.error).toContain('kaboom-7731');

    const waiting = (await stack.as(member.token).runs.get(run.waiting)).body.run;
    expect(waiting.waits).toEqual([expect.objectContaining({ kind: 'approval', nodeId: 'approval' })]);
  });

  function expectSafe(r: SafeRun) {
    expect(r.redaction).toEqual(SAFE_RUN_REDACTION);
    for (const field of ['input', 'output', 'error', 'logs', 'waits', 'executionEvidence', 'executionSnapshots'])
      expect(r).not.toHaveProperty(field);
    expect(typeof r.id).toBe('string');
    expect(typeof r.status).toBe('string');
    expect(r.workspaceId).toBe(stack.ws.workspaceId);
    expect(r.steps.length).toBeGreaterThan(0);
    for (const s of r.steps) {
      for (const field of ['input', 'output', 'error']) expect(s).not.toHaveProperty(field);
      expect(s).toHaveProperty('nodeId');
      expect(s).toHaveProperty('status');
      expect(s).toHaveProperty('startedAt');
      expect(s).toHaveProperty('finishedAt');
      expect(s).toHaveProperty('durationMs');
    }
  }

  test.each([
    ['a viewer workspace key', 'viewer', 'workspace'],
    ['a personal key', 'member', 'personal'],
  ] as const)('%s gets the workspace-safe.v1 projection, on one run and in the list', async (_who, role, scope) => {
    const key = await addUserWithKey(stack.app, stack.ws, role, scope);
    for (const id of [run.plain, run.failing, run.waiting]) {
      const res = await stack.as(key.token).get<SafeRunWithLinks>(`/api/v1/runs/${id}`);
      expect(res.status).toBe(200);
      expectSafe(res.body.run);
      expect(res.text).not.toContain('zebra-5521');
      expect(res.text).not.toContain('kaboom-7731');
    }
    const listed = await list<SafeRunList>('', key.token);
    expect(listed.status).toBe(200);
    expect(ids(listed)).toContain(run.plain);
    for (const r of listed.body.runs) {
      // List items are summaries: no steps, only their count, and the same redaction marker.
      expect(r.redaction).toEqual(SAFE_RUN_REDACTION);
      for (const field of ['input', 'output', 'error', 'logs', 'steps', 'waits', 'executionEvidence']) expect(r).not.toHaveProperty(field);
      expect(r.workspaceId).toBe(stack.ws.workspaceId);
      expect(r.stepCount).toBeGreaterThan(0);
    }
    expect(listed.text).not.toContain('zebra-5521');
    expect(listed.text).not.toContain('kaboom-7731');
  });

  test.each([
    ['a viewer workspace key', 'viewer', 'workspace'],
    ['a personal key', 'member', 'personal'],
  ] as const)('%s cannot probe restricted content through the free-text query', async (_who, role, scope) => {
    const key = await addUserWithKey(stack.app, stack.ws, role, scope);
    // A member finds the runs by their input and error; a safe reader must not, or the
    // query would reveal what the projection hides (one yes/no answer per guess).
    expect(ids(await list('?query=zebra-5521'))).toContain(run.plain);
    expect(ids(await list('?query=kaboom-7731'))).toContain(run.failing);
    for (const secret of ['zebra-5521', 'kaboom-7731']) {
      const res = await list(`?query=${secret}`, key.token);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([]);
    }
    // Safe fields stay searchable.
    expect(ids(await list(`?query=${encodeURIComponent(NAMES.plain)}`, key.token))).toContain(run.plain);
  });
});

describe('GET /api/v1/workflows/{id}/status?runId=', () => {
  const STATUS_KEYS = [
    'workflow',
    'projection',
    'run',
    'status',
    'queued',
    'active',
    'output',
    'error',
    'steps',
    'logs',
    'links',
    'pollAfterMs',
  ];

  test('a member key gets the full status with the last 20 logs', async () => {
    const member = await addUserWithKey(stack.app, stack.ws, 'member');
    const res = await stack.as(member.token).get<FullStatusReport>(`/api/v1/workflows/${wf.chatty}/status?runId=${run.chatty}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([...STATUS_KEYS].sort());
    expect(res.body).toMatchObject({
      workflow: { id: wf.chatty, name: NAMES.chatty },
      projection: { kind: 'workflow-status', version: 1, redacted: false },
      run: { id: run.chatty, status: 'succeeded' },
      status: 'succeeded',
      queued: false,
      active: false,
      output: { kind: 'chatty' },
      error: null,
    });
    expect(res.body.run).not.toHaveProperty('redaction');
    expect(res.body.steps).toHaveLength(23);
    expect(res.body.steps[1]).toHaveProperty('output');
    expect(typeof res.body.pollAfterMs).toBe('number');
    expect(res.body.links).toMatchObject({
      run: `${stack.app.url}${RUNS}/${run.chatty}`,
      cancel: `${stack.app.url}${RUNS}/${run.chatty}/cancel`,
    });

    const all = (await stack.as(member.token).runs.get(run.chatty)).body.run.logs;
    expect(all.length).toBeGreaterThan(20);
    expect(res.body.logs).toHaveLength(20);
    expect(res.body.logs).toEqual(all.slice(-20));
  });

  test('a waiting run is active, with a poll hint', async () => {
    const res = await stack.api.get<FullStatusReport>(`/api/v1/workflows/${wf.approval}/status?runId=${run.waiting}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'waiting', active: true, queued: false });
    expect(res.body.pollAfterMs).toBeGreaterThan(0);
  });

  test('a viewer key gets redacted: true and only safe run data', async () => {
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const res = await stack.as(viewer.token).get<SafeStatusReport>(`/api/v1/workflows/${wf.failing}/status?runId=${run.failing}`);
    expect(res.status).toBe(200);
    expect(res.body.projection).toEqual({ kind: 'workflow-status', version: 1, redacted: true });
    expect(res.body).toMatchObject({ status: 'failed', active: false, queued: false });
    expect(res.body.run.redaction).toEqual(SAFE_RUN_REDACTION);
    expect(res.body.output).toBeUndefined();
    expect(res.body.error).toBeUndefined();
    expect(res.body.logs).toBeUndefined();
    for (const s of res.body.steps) for (const field of ['input', 'output', 'error']) expect(s).not.toHaveProperty(field);
    expect(res.text).not.toContain('kaboom-7731');
  });

  test('an unknown runId, or a run of another workflow, is a 404', async () => {
    const unknown = await stack.api.get(`/api/v1/workflows/${wf.plain}/status?runId=run_missing`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(RUN_NOT_FOUND);
    const elsewhere = await stack.api.get(`/api/v1/workflows/${wf.plain}/status?runId=${run.failing}`);
    expect(elsewhere.status).toBe(404);
  });

  test('without runId: { workflow, runs, statuses } of that workflow', async () => {
    const res = await stack.api.get<WorkflowRunsStatus>(`/api/v1/workflows/${wf.plain}/status`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['runs', 'statuses', 'workflow']);
    expect(res.body.runs.map((r) => r.id)).toEqual([run.rerun, run.plain]);
    expect(res.body.statuses).toMatchObject({ succeeded: 2, failed: 0 });
  });

  test("another workspace's key cannot read the status", async () => {
    const res = await stack.as(other.token).get(`/api/v1/workflows/${wf.plain}/status?runId=${run.plain}`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'API key cannot access this workflow' });
  });
});

describe('POST /api/v1/runs/{id}/cancel', () => {
  test('cancels a waiting run, really cancelling its Temporal execution; a second cancel is a 409', async () => {
    const id = await execute(wf.approval, { kind: 'to-cancel' });
    await waitRun(stack, id, { until: untilWaiting });

    const res = await stack.api.runs.cancel(id);
    expect(res.status).toBe(200);
    expect(res.body.run).toMatchObject({ id, status: 'canceled', active: false });
    expect(res.body.links.run).toBe(`${stack.app.url}${RUNS}/${id}`);

    expect(await temporalStatusAfterClose(id)).toBe('CANCELLED');
    const after = (await stack.api.runs.get(id)).body.run;
    expect(after.status).toBe('canceled');
    expect(after.waits).toEqual([]);
    expect(after.steps.find((s) => s.nodeId === 'after')?.status ?? 'never-ran').not.toBe('succeeded');

    const again = await stack.api.post<Refusable<RunWithLinks>>(`/api/v1/runs/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(typeof again.body.error).toBe('string');
  });

  test('cancelling a finished run is a 409 and leaves it as it was', async () => {
    const res = await stack.api.runs.cancel(run.plain);
    expect(res.status).toBe(409);
    expect((await stack.api.runs.get(run.plain)).body.run.status).toBe('succeeded');
  });

  test('a viewer key cannot cancel', async () => {
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const res = await stack.as(viewer.token).runs.cancel(run.waiting);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Write permission is required.' });
    expect((await stack.api.runs.get(run.waiting)).body.run.status).toBe('waiting');
  });
});

describe('POST /api/v1/runs/{id}/rerun', () => {
  test('starts a new run from the same input, which completes', async () => {
    const res = await stack.api.runs.rerun(run.plain);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['cancelUrl', 'links', 'run', 'statusUrl']);
    const fresh = res.body.run;
    expect(fresh.id).not.toBe(run.plain);
    expect(fresh.id).not.toBe(run.rerun);
    expect(fresh).toMatchObject({ workflowId: wf.plain, input: { customer: 'zebra-5521' } });
    expect(res.body.statusUrl).toBe(`${stack.app.url}${WF}/${wf.plain}/status?runId=${fresh.id}`);
    expect(res.body.cancelUrl).toBe(`${stack.app.url}${RUNS}/${fresh.id}/cancel`);
    expect(res.body.links).toMatchObject({
      status: res.body.statusUrl,
      cancel: res.body.cancelUrl,
      run: `${stack.app.url}${RUNS}/${fresh.id}`,
    });

    const done = await waitRun(stack, fresh.id);
    expect(done.status).toBe('succeeded');
    expect(done.input).toEqual({ customer: 'zebra-5521' });
    expect(done.output).toEqual({ echo: { customer: 'zebra-5521' } });
  });
});

describe('runs of another workspace', () => {
  test('are a 404 "Run not found" on GET, cancel, rerun and approval, and stay untouched', async () => {
    const before = (await stack.api.runs.get(run.waiting)).body.run;
    expect(before.status).toBe('waiting');
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/runs/${run.waiting}`],
      ['POST', `/api/v1/runs/${run.waiting}/cancel`],
      ['POST', `/api/v1/runs/${run.waiting}/rerun`],
      ['POST', `/api/runs/${run.waiting}/approval`, { decision: 'approved' }],
      ['GET', `/api/v1/runs/${run.plain}`],
      ['POST', `/api/v1/runs/${run.plain}/rerun`],
    ];
    const countBefore = ids(await list('?limit=200')).length;
    for (const [method, path, body] of attempts) {
      const res = await stack.as(other.token).request(method, path, { body });
      expect({ method, path, status: res.status, body: res.body }).toEqual({ method, path, status: 404, body: RUN_NOT_FOUND });
    }
    const after = (await stack.api.runs.get(run.waiting)).body.run;
    expect(after).toEqual(before);
    expect(ids(await list('?limit=200')).length).toBe(countBefore);
    expect(ids(await list('', other.token))).toEqual([]);
    // The execution still waits in Temporal: the foreign cancel did not reach it.
    expect((await stack.app.deps.temporal.client.workflow.getHandle(run.waiting).describe()).status.name).toBe('RUNNING');
  });

  test("the owner's key can still decide that approval (the 404s were not a broken route)", async () => {
    const id = await execute(wf.approval, { kind: 'to-approve' });
    await waitRun(stack, id, { until: untilWaiting });
    const res = await stack.api.post<ApprovalResult>(`/api/runs/${id}/approval`, { decision: 'approved' });
    expect(res.status).toBe(200);
    expect(res.body.approval).toEqual({ nodeId: 'approval', decision: 'approved' });
    const done = await waitRun(stack, id);
    expect(done.status).toBe('succeeded');
    expect(done.logs.map((l) => l.message)).toContain('approved');
    expect(TERMINAL).toContain(done.status);
  });
});

describe('runs executing at the same time', () => {
  // Several runs in flight at once is the normal case for a worker. They run on a dedicated
  // worker with its own connection pool (the file's worker is stopped first), so that while
  // this fails the API that observes the runs keeps answering.
  test('all finish and are listed as succeeded', async () => {
    await stack.worker.stop();
    const runtime = await startTestApp();
    const dedicated = await startTestWorker(runtime);
    const started: string[] = [];
    try {
      started.push(...(await Promise.all(Array.from({ length: 8 }, (_, i) => execute(wf.plain, { batch: i })))));
      const finished = await Promise.all(started.map((id) => waitRun(stack, id)));
      expect(finished.map((r) => r.status)).toEqual(Array(8).fill('succeeded'));
      expect(finished.map((r) => r.output)).toEqual(Array.from({ length: 8 }, (_, i) => ({ echo: { batch: i } })));
      const listed = await list(`?workflowId=${wf.plain}&status=succeeded`);
      expect(ids(listed)).toEqual(expect.arrayContaining(started));
    } finally {
      for (const id of started)
        await stack.app.deps.temporal.client.workflow
          .getHandle(id)
          .terminate('test cleanup')
          .catch(() => undefined);
      await runtime.close();
      await dedicated.stop();
    }
  }, 120_000);
});
