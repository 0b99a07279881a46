/**
 * The shared kit of the abuse suite (issue 26, item 6): one stack per test file, where
 * workspace A attacks and workspace B is the bystander whose probe run (transform → code →
 * transform) must keep succeeding. Every assertion is on outcomes (statuses, messages, rows),
 * never on timings: bounds are generous deadlines, not measurements. `npm run bench -- abuse`
 * measures the same cases (scripts/bench/abuse.ts).
 *
 * Usage, one stack per file so the suite stays fast:
 *
 *   let kit: AbuseStack;
 *   beforeAll(async () => (kit = await startAbuseStack()));
 *   afterAll(() => kit?.close());
 *   test('…', () => kit.survives(async () => { const run = await kit.runLive(kit.a, [codeNode('…')]); expectFailedNode(run, /…/); }));
 */
import { RunSchema } from '../../db/entities';
import type { AppConfig } from '../../services/kernel/config';
import {
  createWorkspace,
  http,
  startTestStack,
  startTestWorker,
  waitForRun,
  type HttpResult,
  type TestApp,
  type TestStack,
  type TestWorker,
  type WorkspaceFixture,
} from '../support/harness';
import { PROBE_INPUT, PROBE_OUTPUT, chain, probeGraph, type GraphNode, type WorkflowBody } from './probe';

export { CLEAR_LIMIT_MESSAGE } from './attacks';
export { PROBE_INPUT, PROBE_OUTPUT, chain, codeNode, probeGraph, transformNode, type GraphNode, type WorkflowBody } from './probe';

/**
 * How long a run of the probe (or any run the kit waits for) may take before the case fails.
 * A "hung" bound, not a speed target: a probe takes well under a second at rest, but beside a
 * benchmark and A's attack on 2 cores it took over 60 s to leave `queued` (CI, load 7–12).
 * Isolation is shown by B completing at all while A attacks, and by the fairness tests.
 */
export const RUN_DEADLINE_MS = 180_000;
/** How long the kit waits for A's runs to leave queued/running after an attack settled (hung bound). */
const SETTLE_DEADLINE_MS = 180_000;
// Every case waits for at least one probe and one settle: its own limit must be above both.
jest.setTimeout(900_000);

export interface AbuseWorkspace extends WorkspaceFixture {
  label: 'A' | 'B';
}

export interface AbuseStack {
  app: TestApp;
  stack: TestStack;
  /** The attacker. */
  a: AbuseWorkspace;
  /** The bystander; its probe workflow is deployed. */
  b: AbuseWorkspace;
  /** B's deployed probe workflow. */
  probeWorkflowId: string;
  /** Every HTTP answer the kit received for A's requests (assertNo5xx reads it by default). */
  responses: HttpResult[];
  /** HTTP as `ws`'s owner key; A's answers are recorded in `responses`. */
  request(ws: AbuseWorkspace, method: string, path: string, body?: unknown): Promise<HttpResult>;
  /** Executes B's probe live and asserts it succeeded with the expected output; returns the run. */
  probeB(): Promise<any>;
  /** Asserts GET /healthz answers 200. */
  healthz(): Promise<void>;
  /** Asserts no run of `ws` (default A), dry or live, is left `queued` or `running` once the attack settled. */
  assertNoQueuedRuns(ws?: AbuseWorkspace): Promise<void>;
  /** Asserts a fresh live run of `ws` (default B) completes: the worker still polls and runs workflow tasks. */
  assertWorkerPolling(ws?: AbuseWorkspace): Promise<void>;
  /** Creates a workflow of `ws` (201 asserted); returns its id. */
  createWorkflow(ws: AbuseWorkspace, body: WorkflowBody): Promise<string>;
  /** Deploys (200 asserted). */
  deploy(ws: AbuseWorkspace, workflowId: string): Promise<void>;
  /** POST /execute live; returns the raw answer (202 expected, not asserted: admission may refuse). */
  execute(ws: AbuseWorkspace, workflowId: string, input?: unknown): Promise<HttpResult>;
  /** Waits (RUN_DEADLINE_MS) for a run of `ws` to end; returns it. */
  waitForRun(ws: AbuseWorkspace, runId: string): Promise<any>;
  /** Creates, deploys and executes `nodes` (chained after a start node, or a full body) live; waits for the run to end and returns it. */
  runLive(ws: AbuseWorkspace, nodes: GraphNode[] | WorkflowBody, input?: unknown): Promise<any>;
  /**
   * As `runLive`, but a refusal is an outcome too: a 4xx to the deploy or the execute (the
   * service rejecting what it can tell is unbounded before running it) comes back as `refused`.
   */
  tryRunLive(ws: AbuseWorkspace, nodes: GraphNode[] | WorkflowBody, input?: unknown): Promise<{ refused: HttpResult } | { run: any }>;
  /** Creates the workflow and dry-runs it (its candidate, as the editor does: no deploy needed); returns the raw answer. */
  dryRun(ws: AbuseWorkspace, nodes: GraphNode[] | WorkflowBody, input?: unknown): Promise<HttpResult>;
  /** Dry-runs an existing workflow's candidate; returns the raw answer. */
  dryRunWorkflow(ws: AbuseWorkspace, workflowId: string, input?: unknown): Promise<HttpResult>;
  /**
   * The shape of every abuse case: runs `attack` while B probes in a loop and /healthz is polled;
   * then asserts every probe succeeded, every /healthz answered 200, and afterwards a fresh
   * probe succeeds, no run of A is left queued or running, no answer to A was a 5xx, and the
   * worker still runs new runs. Returns the attack's result; an attack that throws fails the case.
   */
  survives<T>(attack: () => Promise<T>): Promise<T>;
  /** Stops the stack's worker and starts another in this process (a worker restart). */
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

/** Asserts no answer in `responses` is a 5xx, naming the first that is. */
export function assertNo5xx(responses: HttpResult[]): void {
  const bad = responses.find((r) => r.status >= 500);
  expect(bad ? `${bad.status} ${bad.text.slice(0, 500)}` : 'no 5xx').toBe('no 5xx');
}

/** Asserts `run` failed at a node with a message matching `message` (a clear message, not a crash). */
export function expectFailedNode(run: any, message: RegExp, nodeId?: string): void {
  expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(message) });
  if (nodeId) expect(run.errorNodeId).toBe(nodeId);
}

/**
 * The outcome every bounded attack must have: the run `failed` with a message matching
 * `message`, or (when `succeeded` is given and accepts it) a run that finished with the right
 * result. A stall that ends is not caught here: the benchmark measures those.
 */
export function expectFailedOrSucceeded(run: any, message: RegExp, succeeded?: (run: any) => boolean): void {
  if (run?.status === 'succeeded' && succeeded?.(run)) return;
  expect({ status: run?.status, error: run?.error }).toEqual({ status: 'failed', error: expect.stringMatching(message) });
}

/**
 * A dry run's answer under attack: a 4xx naming the problem, or 201 with the simulated run
 * ended (`expectFailedOrSucceeded`). Never a 5xx.
 */
export function expectDryRunEnded(res: HttpResult, message: RegExp, succeeded?: (run: any) => boolean): void {
  if (res.status >= 400 && res.status < 500) return expect4xx(res, message);
  expect([res.status, res.text.slice(0, 300)]).toEqual([201, expect.anything()]);
  expect(res.body.run.dryRun).toBe(true);
  expectFailedOrSucceeded(res.body.run, message, succeeded);
}

/**
 * Asserts no string (or key) in `value` holds U+0000 or a lone UTF-16 surrogate. Checks the
 * characters themselves: a log line may legitimately contain the six characters `\u0000`.
 */
export function expectWellFormed(value: unknown): void {
  const bad: string[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (v.includes('\u0000') || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v))
        bad.push(JSON.stringify(v).slice(0, 120));
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        visit(k);
        visit(x);
      }
    }
  };
  visit(value);
  expect(bad).toEqual([]);
}

/** Asserts an answer is a 4xx whose error text matches `message`. */
export function expect4xx(res: HttpResult, message: RegExp): void {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(JSON.stringify(res.body)).toMatch(message);
}

/**
 * The one stack of a test file: started before its first test (generous timeouts for a busy
 * machine), closed after its last. The returned object stands for the stack once started.
 */
export function abuseStackPerFile(opts: { config?: Partial<AppConfig>; allowPrivateNetworks?: boolean } = {}): AbuseStack {
  let started: AbuseStack | undefined;
  beforeAll(async () => {
    started = await startAbuseStack(opts);
  }, 120_000);
  afterAll(() => started?.close());
  return new Proxy({} as AbuseStack, {
    get: (_target, key) => {
      if (!started) throw new Error('The abuse stack is not started yet: use it inside a test');
      return started[key as keyof AbuseStack];
    },
  });
}

/**
 * Starts the app and a worker in this process (startTestStack), workspace A and workspace B,
 * and deploys B's probe; checks the probe succeeds at rest before any attack.
 */
export async function startAbuseStack(opts: { config?: Partial<AppConfig>; allowPrivateNetworks?: boolean } = {}): Promise<AbuseStack> {
  const stack = await startTestStack({ config: opts.config, workspaceName: 'Attacker A', allowPrivateNetworks: opts.allowPrivateNetworks });
  const app = stack.app;
  const a: AbuseWorkspace = { ...stack.ws, label: 'A' };
  const b: AbuseWorkspace = { ...(await createWorkspace(app, 'Bystander B')), label: 'B' };
  let worker: TestWorker = stack.worker;
  const responses: HttpResult[] = [];

  const request = async (ws: AbuseWorkspace, method: string, path: string, body?: unknown) => {
    const res = await http(app, method, path, { token: ws.token, body });
    if (ws.label === 'A') responses.push(res);
    return res;
  };
  const asBody = (nodes: GraphNode[] | WorkflowBody): WorkflowBody => (Array.isArray(nodes) ? chain(nodes) : nodes);
  const createWorkflow = async (ws: AbuseWorkspace, body: WorkflowBody) => {
    const res = await request(ws, 'POST', '/api/v1/workflows', body);
    expect([res.status, res.text.slice(0, 300)]).toEqual([201, expect.anything()]);
    return res.body.workflow.id as string;
  };
  const deploy = async (ws: AbuseWorkspace, id: string) => {
    const res = await request(ws, 'POST', `/api/v1/workflows/${id}/deploy`);
    expect([res.status, res.text.slice(0, 300)]).toEqual([200, expect.anything()]);
  };
  const execute = (ws: AbuseWorkspace, id: string, input: unknown = {}) =>
    request(ws, 'POST', `/api/v1/workflows/${id}/execute`, { input });
  const finish = (ws: AbuseWorkspace, runId: string) => waitForRun(app, ws.token, runId, undefined, RUN_DEADLINE_MS);
  const runLive = async (ws: AbuseWorkspace, nodes: GraphNode[] | WorkflowBody, input: unknown = {}) => {
    const id = await createWorkflow(ws, asBody(nodes));
    await deploy(ws, id);
    const exec = await execute(ws, id, input);
    expect([exec.status, exec.text.slice(0, 300)]).toEqual([202, expect.anything()]);
    return finish(ws, exec.body.run.id);
  };
  const tryRunLive = async (ws: AbuseWorkspace, nodes: GraphNode[] | WorkflowBody, input: unknown = {}) => {
    const id = await createWorkflow(ws, asBody(nodes));
    const deployed = await request(ws, 'POST', `/api/v1/workflows/${id}/deploy`);
    if (deployed.status >= 400 && deployed.status < 500) return { refused: deployed };
    expect([deployed.status, deployed.text.slice(0, 300)]).toEqual([200, expect.anything()]);
    const exec = await execute(ws, id, input);
    if (exec.status >= 400 && exec.status < 500) return { refused: exec };
    expect([exec.status, exec.text.slice(0, 300)]).toEqual([202, expect.anything()]);
    return { run: await finish(ws, exec.body.run.id) };
  };
  // `target: candidate` simulates the saved draft (no deploy needed); `dryRun: true` alone would need an active version.
  const dryRunWorkflow = (ws: AbuseWorkspace, id: string, input: unknown = {}) =>
    request(ws, 'POST', `/api/v1/workflows/${id}/execute`, { input, target: 'candidate', dryRun: true });
  const dryRun = async (ws: AbuseWorkspace, nodes: GraphNode[] | WorkflowBody, input: unknown = {}) =>
    dryRunWorkflow(ws, await createWorkflow(ws, asBody(nodes)), input);

  const probeWorkflowId = await createWorkflow(b, probeGraph());
  await deploy(b, probeWorkflowId);
  const probeB = async () => {
    const exec = await execute(b, probeWorkflowId, PROBE_INPUT);
    expect([exec.status, exec.text.slice(0, 300)]).toEqual([202, expect.anything()]);
    const run = await finish(b, exec.body.run.id);
    expect({ status: run.status, output: run.output, error: run.error ?? null }).toEqual({
      status: 'succeeded',
      output: PROBE_OUTPUT,
      error: null,
    });
    return run;
  };
  const healthz = async () => {
    const res = await fetch(`${app.url}/healthz`);
    await res.text();
    expect(res.status).toBe(200);
  };
  const assertNoQueuedRuns = async (ws: AbuseWorkspace = a) => {
    const unfinished = () =>
      app.orm.em
        .fork()
        .find(RunSchema, { workspaceId: ws.workspaceId, status: { $in: ['queued', 'running'] } }, { fields: ['id', 'status', 'dryRun'] });
    const deadline = Date.now() + SETTLE_DEADLINE_MS;
    let left = await unfinished();
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      left = await unfinished();
    }
    expect(left.map((r) => `${r.id} ${r.status}${r.dryRun ? ' (dry run)' : ''}`)).toEqual([]);
  };
  const pollCheckIds = new Map<string, string>();
  const assertWorkerPolling = async (ws: AbuseWorkspace = b) => {
    let pollCheckId = pollCheckIds.get(ws.workspaceId);
    if (!pollCheckId) {
      pollCheckId = await createWorkflow(ws, chain([{ id: 'noop', type: 'transform', config: { expression: '{ "alive": true }' } }]));
      await deploy(ws, pollCheckId);
      pollCheckIds.set(ws.workspaceId, pollCheckId);
    }
    const exec = await execute(ws, pollCheckId);
    expect([exec.status, exec.text.slice(0, 300)]).toEqual([202, expect.anything()]);
    const run = await finish(ws, exec.body.run.id);
    expect({ status: run.status, output: run.output }).toEqual({ status: 'succeeded', output: { alive: true } });
  };

  const survives = async <T>(attack: () => Promise<T>): Promise<T> => {
    // Only this case's answers: an earlier case's 5xx fails that case, not every later one.
    const firstResponse = responses.length;
    let settled = false;
    const attackDone = attack().finally(() => (settled = true));
    // Keep the rejection observable by the awaiting line below, not as an unhandled rejection meanwhile.
    attackDone.catch(() => undefined);
    const probes: Array<Promise<unknown>> = [];
    const health: number[] = [];
    const probeLoop = (async () => {
      do {
        const p = probeB();
        probes.push(p);
        await p.catch(() => undefined);
      } while (!settled);
    })();
    const healthLoop = (async () => {
      do {
        const res = await fetch(`${app.url}/healthz`).then(
          async (r) => (await r.text(), r.status),
          () => 0,
        );
        health.push(res);
        await new Promise((r) => setTimeout(r, 200));
      } while (!settled);
    })();
    const result = await attackDone;
    await Promise.all([probeLoop, healthLoop]);
    for (const p of probes) await p; // the first failed probe fails the case with its own assertion
    expect(health.filter((s) => s !== 200)).toEqual([]);
    await probeB();
    await healthz();
    await assertNoQueuedRuns(a);
    assertNo5xx(responses.slice(firstResponse));
    await assertWorkerPolling(b);
    return result;
  };

  // A worker that already FAILED (F1) refuses shutdown(): stopping it is then nothing to do.
  const stopWorker = () => worker.stop().catch(() => undefined);
  const restartWorker = async () => {
    await stopWorker();
    worker = await startTestWorker(app);
  };

  // The probe must work at rest, or every case would blame its attack for a broken stack.
  await probeB();

  return {
    app,
    stack,
    a,
    b,
    probeWorkflowId,
    responses,
    request,
    probeB,
    healthz,
    assertNoQueuedRuns,
    assertWorkerPolling,
    createWorkflow,
    deploy,
    execute,
    waitForRun: finish,
    runLive,
    tryRunLive,
    dryRun,
    dryRunWorkflow,
    survives,
    restartWorker,
    close: async () => {
      await stopWorker();
      await app.close();
    },
  };
}

/**
 * Imports one export of the external workflow tool as `ws` (POST /workflows with importJson,
 * 201 asserted), deploys it and runs it live; returns the ended run.
 */
export async function runImportedLive(kit: AbuseStack, ws: AbuseWorkspace, exportText: string, input: unknown = {}): Promise<any> {
  const created = await kit.request(ws, 'POST', '/api/v1/workflows', { importJson: exportText });
  expect([created.status, created.text.slice(0, 300)]).toEqual([201, expect.anything()]);
  await kit.deploy(ws, created.body.workflow.id);
  const exec = await kit.execute(ws, created.body.workflow.id, input);
  expect([exec.status, exec.text.slice(0, 300)]).toEqual([202, expect.anything()]);
  return kit.waitForRun(ws, exec.body.run.id);
}

/** An export of the external tool: a manual trigger, then one HTTP Request node of `version` with `parameters`. */
export function httpRequestExport(version: number, parameters: Record<string, unknown>, id = `abuse-http-${version}`): string {
  return JSON.stringify({
    id,
    name: `HTTP Request v${version}`,
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {}, position: [0, 0] },
      { name: 'Call', type: 'n8n-nodes-base.httpRequest', typeVersion: version, parameters, position: [200, 0] },
    ],
    connections: { Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
  });
}
