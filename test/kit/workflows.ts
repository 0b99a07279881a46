/**
 * Deploying and running workflows over real HTTP, as a workspace's caller. Each helper fails
 * the test (throws with the answer's text) when a step does not answer as the contract says.
 */
import { waitForRun as pollRun } from '../support/harness';
import { client, expectStatus, type AppTarget, type DeployResult, type Run } from './client';
import type { WorkflowBody } from './graphs';

/** A workspace to act in: the app and a credential of the workspace (a `useTestStack()` handle is one). */
export interface WorkspaceTarget {
  app: AppTarget;
  ws: { token: string };
}

export interface DeployedWorkflow {
  workflowId: string;
  version: number;
  /** The first webhook trigger's invoke URL, and its path (what `http` takes). */
  webhookUrl: string | null;
  webhookPath: string | null;
  /** The whole deploy answer. */
  deploy: DeployResult;
}

const TERMINAL = ['succeeded', 'failed', 'canceled'];

/** Creates the workflow (201) and deploys it (200). `opts.token` acts as another caller of the workspace. */
export async function deployWorkflow(
  on: WorkspaceTarget,
  graph: WorkflowBody,
  opts: { name?: string; token?: string } = {},
): Promise<DeployedWorkflow> {
  const api = client(on.app, opts.token ?? on.ws.token);
  const created = expectStatus(
    await api.workflows.create({ ...(opts.name !== undefined ? { name: opts.name } : {}), ...graph }),
    201,
    'create workflow',
  );
  const workflowId = created.body.workflow.id;
  const deployed = expectStatus(await api.workflows.deploy(workflowId), 200, `deploy ${graph.name ?? opts.name ?? workflowId}`);
  const webhookUrl = deployed.body.webhookUrl;
  return {
    workflowId,
    version: deployed.body.version,
    webhookUrl,
    webhookPath: webhookUrl ? new URL(webhookUrl).pathname : null,
    deploy: deployed.body,
  };
}

export interface DeployedWebhook extends DeployedWorkflow {
  webhookUrl: string;
  webhookPath: string;
}

/** `deployWorkflow` of a graph with a webhook trigger; fails the test when the deploy answer has no webhook URL. */
export async function deployWebhook(
  on: WorkspaceTarget,
  graph: WorkflowBody,
  opts: { name?: string; token?: string } = {},
): Promise<DeployedWebhook> {
  const deployed = await deployWorkflow(on, graph, opts);
  const { webhookUrl, webhookPath } = deployed;
  if (!webhookUrl || !webhookPath) throw new Error(`deploy ${deployed.workflowId}: no webhook URL in ${JSON.stringify(deployed.deploy)}`);
  return { ...deployed, webhookUrl, webhookPath };
}

/** Starts a run of a deployed workflow (202) and returns its id. */
export async function executeWorkflow(
  on: WorkspaceTarget,
  workflowId: string,
  input: unknown = {},
  opts: { token?: string; extra?: Record<string, unknown> } = {},
): Promise<string> {
  const res = expectStatus(
    await client(on.app, opts.token ?? on.ws.token).workflows.execute(workflowId, input, opts.extra),
    202,
    'execute',
  );
  return res.body.run.id;
}

/** Polls the run until `until(run)` holds (default: it ended); fails with its last state after `timeoutMs`. */
export async function waitRun(
  on: WorkspaceTarget,
  runId: string,
  opts: { until?: (run: Run) => boolean; timeoutMs?: number; token?: string } = {},
): Promise<Run> {
  return (await pollRun(
    on.app,
    opts.token ?? on.ws.token,
    runId,
    opts.until ?? ((run: Run) => TERMINAL.includes(run.status)),
    opts.timeoutMs,
  )) as Run;
}

/** Starts a run and waits for it to end (or for `opts.until`). */
export async function executeAndWait(
  on: WorkspaceTarget,
  workflowId: string,
  input: unknown = {},
  opts: { until?: (run: Run) => boolean; timeoutMs?: number; token?: string; extra?: Record<string, unknown> } = {},
): Promise<Run> {
  return waitRun(on, await executeWorkflow(on, workflowId, input, opts), opts);
}

/** Deploys `graph`, runs it once with `input` and waits for the end: the one-shot of runtime tests. */
export async function runWorkflow(
  on: WorkspaceTarget,
  graph: WorkflowBody,
  input: unknown = {},
  opts: { name?: string; timeoutMs?: number } = {},
): Promise<{ workflowId: string; run: Run }> {
  const { workflowId } = await deployWorkflow(on, graph, opts);
  return { workflowId, run: await executeAndWait(on, workflowId, input, opts) };
}
