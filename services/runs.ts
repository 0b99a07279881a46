import type { EntityManager } from '@mikro-orm/postgresql';
import {
  RunLogSchema,
  RunSchema,
  RunStepSchema,
  TERMINAL_RUN_STATUSES,
  WorkflowVersionSchema,
  type ExecutionEvidence,
  type Run,
  type RunLog,
  type RunStatus,
  type RunStep,
  type RunTrigger,
  type Workflow,
} from '../db/entities';
import { runGraph, type EngineHost, type LogRecord, type StepRecord } from '../engine/interpreter';
import { withConfigDefaults } from '../engine/nodes';
import type { WorkflowGraph } from '../engine/types';
import { recordAudit } from './audit';
import { invalidInput, conflict, notFound, unavailable } from './errors';
import { newId } from './ids';
import { projectFor, RUN_RESTRICTED_FIELDS, RUN_UNLISTED_RESTRICTED_FIELDS } from './projection';
import type { Principal, WorkspacePrincipal } from './principal';
import type { RunLauncher } from './ports';
import { runUserCode } from './sandbox';
import { candidateVersionId, validateWorkflowGraph } from './workflows';

export const RUN_NOT_FOUND = 'Run not found';
export const isTerminal = (status: RunStatus) => TERMINAL_RUN_STATUSES.includes(status);

export interface UrlBase {
  /** Request origin, e.g. `https://api.example.com`; absolute URLs are built from it. */
  origin: string;
  /** When the Temporal Web UI address is configured, runs link straight to their execution there. */
  temporalUi?: { url: string; namespace: string };
}

export function runLinks(run: Pick<Run, 'id' | 'workflowId'> & { dryRun?: boolean }, base: UrlBase) {
  const v1 = `${base.origin}/api/v1`;
  // Dry runs never reach Temporal, so they have nothing to show there.
  const temporal = base.temporalUi && !run.dryRun ? `${base.temporalUi.url.replace(/\/$/, '')}/namespaces/${encodeURIComponent(base.temporalUi.namespace)}/workflows/${encodeURIComponent(run.id)}` : undefined;
  return {
    ...(temporal ? { temporal } : {}),
    run: `${v1}/runs/${run.id}`,
    execution: `${v1}/logs/executions/${run.id}`,
    status: `${v1}/workflows/${run.workflowId}/status?runId=${run.id}`,
    rerun: `${v1}/runs/${run.id}/rerun`,
    cancel: `${v1}/runs/${run.id}/cancel`,
  };
}

/** The full run object; the safe projection is derived from it by `projectRun`. */
export function runView(run: Run, steps: RunStep[], logs: RunLog[], base: UrlBase) {
  return {
    id: run.id,
    workspaceId: run.workspaceId,
    workflowId: run.workflowId,
    versionId: run.versionId,
    workflowName: run.workflowName,
    trigger: run.trigger,
    status: run.status,
    active: !isTerminal(run.status),
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    updatedAt: run.updatedAt,
    durationMs: run.durationMs,
    costCredits: run.costCredits,
    dryRun: run.dryRun,
    parentRunId: run.parentRunId,
    parentNodeId: run.parentNodeId,
    steps: steps.map((s) => ({
      nodeId: s.nodeId,
      nodeType: s.nodeType,
      nodeName: s.nodeName,
      status: s.status,
      attempts: s.attempts,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      durationMs: s.durationMs,
      input: s.input,
      output: s.output,
      error: s.error,
    })),
    input: run.input,
    output: run.output,
    error: run.error,
    errorNodeId: run.errorNodeId,
    cancelReason: run.cancelReason,
    logs: logs.map((l) => ({ seq: l.seq, nodeId: l.nodeId, level: l.level, message: l.message, data: l.data, createdAt: l.createdAt })),
    waits: run.waits.map(({ token, ...wait }) => (token ? { ...wait, resumeUrl: `${base.origin}/api/hooks/resume/${token}` } : wait)),
    executionEvidence: run.executionEvidence,
  };
}

export type RunView = ReturnType<typeof runView>;

/** Full run for principals with write permission, `workspace-safe.v1` for the others. */
export function projectRun(principal: Principal, view: RunView) {
  return projectFor(principal, view, RUN_RESTRICTED_FIELDS, RUN_UNLISTED_RESTRICTED_FIELDS);
}

/** Loads runs with their steps and logs (one query each) and renders them in input order. */
export async function loadRunViews(em: EntityManager, runs: Run[], base: UrlBase, opts: { logLimit?: number } = {}): Promise<RunView[]> {
  if (runs.length === 0) return [];
  const ids = runs.map((r) => r.id);
  const [steps, logs] = await Promise.all([
    em.find(RunStepSchema, { runId: { $in: ids } }, { orderBy: { seq: 'asc' } }),
    em.find(RunLogSchema, { runId: { $in: ids } }, { orderBy: { seq: 'asc' } }),
  ]);
  const byRun = <T extends { runId: string }>(rows: T[]) => {
    const map = new Map<string, T[]>();
    for (const row of rows) map.set(row.runId, [...(map.get(row.runId) ?? []), row]);
    return map;
  };
  const stepsByRun = byRun(steps);
  const logsByRun = byRun(logs);
  return runs.map((r) => {
    const runLogs = logsByRun.get(r.id) ?? [];
    return runView(r, stepsByRun.get(r.id) ?? [], opts.logLimit ? runLogs.slice(-opts.logLimit) : runLogs, base);
  });
}

/** A run of the principal's workspace; 404 for missing and foreign runs alike. */
export async function loadRun(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<Run> {
  const run = await em.findOne(RunSchema, { id, workspaceId: principal.workspaceId });
  if (!run) throw notFound(RUN_NOT_FOUND);
  return run;
}

export interface ExecuteInput {
  input?: unknown;
  startNodeId?: string;
  dryRun?: boolean;
  target: 'active' | 'candidate';
  executionTargetId?: string;
  expectedVersionId?: string;
  confirm?: boolean;
  endUser?: { externalId: string };
  message?: string;
}

interface ChosenGraph {
  graph: WorkflowGraph;
  versionId: string | null;
  /** Set for candidate runs, whose graph is not a stored version. */
  snapshot: WorkflowGraph | null;
  dryRun: boolean;
}

/** Applies the spec's execute rules 1 to 4 and picks the graph to run. */
async function chooseGraph(em: EntityManager, principal: WorkspacePrincipal, wf: Workflow, body: ExecuteInput): Promise<ChosenGraph> {
  const isGateway = principal.kind === 'api_key' && principal.scope === 'end_user_gateway';
  if (!isGateway && (body.endUser !== undefined || body.message !== undefined)) {
    throw invalidInput('endUser and message are accepted only from a product gateway key.');
  }
  if (body.executionTargetId !== undefined) {
    // Named destinations arrive with the destinations issue; never fall back to production.
    throw invalidInput(`Execution target "${body.executionTargetId}" is not available for this workflow.`);
  }
  if (wf.trashed) throw invalidInput('A trashed workflow cannot be executed.');
  if (wf.status === 'disabled') throw invalidInput('The workflow is disabled; enable it before executing.');

  if (body.target === 'active') {
    if (!wf.activeVersionId) {
      throw invalidInput('The workflow has no deployed version. Deploy it first (POST /deploy), or execute target "candidate" to test the draft.');
    }
    const version = await em.findOneOrFail(WorkflowVersionSchema, { id: wf.activeVersionId });
    return { graph: { nodes: version.nodes, edges: version.edges }, versionId: version.id, snapshot: null, dryRun: body.dryRun === true };
  }

  const graph = { nodes: wf.nodes, edges: wf.edges };
  const candidateId = candidateVersionId(graph);
  if (body.dryRun !== false) return { graph, versionId: candidateId, snapshot: graph, dryRun: true };
  if (body.confirm !== true) throw invalidInput('Live candidate execution requires confirm: true.');
  if (!body.expectedVersionId) throw invalidInput('Live candidate execution requires expectedVersionId (the workflow\'s candidateVersionId).');
  if (body.expectedVersionId !== candidateId) {
    throw conflict('The candidate changed since expectedVersionId was read; fetch the workflow and retry with its candidateVersionId.', {
      code: 'workflow_candidate_changed',
      details: { candidateVersionId: candidateId },
    });
  }
  return { graph, versionId: candidateId, snapshot: graph, dryRun: false };
}

export type ExecuteResult = { kind: 'queued'; run: Run } | { kind: 'dry'; run: Run };

/**
 * Executes a workflow: a dry run is interpreted here with simulated side effects and stored
 * finished (201); a live run is stored `queued` and handed to the durable engine (202). When
 * the engine refuses the start, the run is left `canceled` with the reason and the call
 * answers 503.
 */
export async function executeWorkflow(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  wf: Workflow,
  body: ExecuteInput,
  trigger: RunTrigger = 'api',
): Promise<ExecuteResult> {
  const chosen = await chooseGraph(em, principal, wf, body);
  const validation = validateWorkflowGraph(chosen.graph);
  if (!validation.report.valid) {
    throw invalidInput('The workflow graph is not valid; fix it before executing.', { details: { ...validation } });
  }
  if (body.startNodeId !== undefined && !chosen.graph.nodes.some((n) => n.id === body.startNodeId)) {
    throw invalidInput(`startNodeId "${body.startNodeId}" is not a node of this workflow.`);
  }
  const run = createRunRow(em, principal, wf, {
    trigger,
    input: body.input ?? null,
    startNodeId: body.startNodeId ?? null,
    versionId: chosen.versionId,
    snapshot: chosen.snapshot,
    dryRun: chosen.dryRun,
    requestedTarget: body.target,
  });
  // End-user gateway runs (rules in services/endUsers.ts) remember whom they ran for.
  run.endUserExternalId = body.endUser?.externalId ?? null;
  if (chosen.dryRun) {
    await dryRun(em, run, chosen.graph);
    return { kind: 'dry', run };
  }
  await em.flush();
  return { kind: 'queued', run: await launch(em, launcher, run, chosen.graph) };
}

async function launch(em: EntityManager, launcher: RunLauncher, run: Run, graph: WorkflowGraph): Promise<Run> {
  try {
    await launcher.start(run, graph);
  } catch (err) {
    run.status = 'canceled';
    run.cancelReason = `The durable engine refused to start the run: ${(err as Error).message}`;
    run.finishedAt = new Date();
    run.updatedAt = new Date();
    await em.flush();
    throw unavailable('The run could not be handed to the durable engine; it was canceled.', { details: { runId: run.id, reason: run.cancelReason } });
  }
  return run;
}

function createRunRow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  args: {
    trigger: RunTrigger;
    input: unknown;
    startNodeId: string | null;
    versionId: string | null;
    snapshot: WorkflowGraph | null;
    dryRun: boolean;
    requestedTarget: 'active' | 'candidate';
  },
): Run {
  const now = new Date();
  const evidence: ExecutionEvidence = {
    requestedTarget: args.requestedTarget,
    versionId: args.versionId,
    resourceMode: args.dryRun ? 'simulated' : 'workspace-live',
    reviewIdentity: null,
  };
  return em.create(RunSchema, {
    id: newId('run'),
    workspaceId: principal.workspaceId,
    workflowId: wf.id,
    versionId: args.versionId,
    workflowName: wf.name,
    trigger: args.trigger,
    status: 'queued',
    input: args.input,
    output: null,
    error: null,
    errorNodeId: null,
    startNodeId: args.startNodeId,
    dryRun: args.dryRun,
    executionEvidence: evidence,
    waits: [],
    graphSnapshot: args.snapshot,
    parentRunId: null,
    parentNodeId: null,
    costCredits: 0,
    cancelReason: null,
    createdByKeyId: principal.kind === 'api_key' ? principal.apiKeyId : null,
    createdByUserId: principal.userId,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    createdAt: now,
    updatedAt: now,
  });
}

/**
 * Interprets the graph in-process: pure nodes and code nodes (sandboxed, no effects) run for
 * real; HTTP calls, waits, approvals, events and subworkflows are simulated and marked so.
 */
async function dryRun(em: EntityManager, run: Run, graph: WorkflowGraph): Promise<void> {
  const steps = new Map<string, StepRecord>();
  const logs: LogRecord[] = [];
  const host: EngineHost = {
    now: () => Date.now(),
    async runAction(node, config, input) {
      if (node.type === 'code') {
        const result = await runUserCode(String(config.source), input);
        if (!result.ok) throw new Error(result.error.message);
        return { output: result.output, logs: result.logs };
      }
      const { method, url, headers, query, body } = config;
      return { output: { simulated: true, request: { method, url, headers: headers ?? {}, query: query ?? {}, body: body ?? null } } };
    },
    async waitTimer(node, untilMs) {
      logs.push(simulatedLog(logs.length, node.id, `Simulated wait until ${new Date(untilMs).toISOString()}`));
    },
    async waitApproval(node) {
      logs.push(simulatedLog(logs.length, node.id, 'Simulated approval: approved'));
      return { decision: 'approved', comment: 'simulated', decidedBy: null };
    },
    async waitEvent(node) {
      logs.push(simulatedLog(logs.length, node.id, 'Simulated event: resumed with null'));
      return null;
    },
    async runSubworkflow(_node, config) {
      return { simulated: true, workflowId: config.workflowId };
    },
    onStep: (step) => void steps.set(step.nodeId, step),
    onLog: (log) => void logs.push({ ...log, seq: logs.length }),
    onResponse: () => undefined,
    isCancellation: () => false,
  };
  const startedAt = new Date();
  run.status = 'running';
  run.startedAt = startedAt;
  let outcome;
  try {
    outcome = await runGraph({ graph: withConfigDefaults(graph), input: run.input, trigger: run.trigger, startNodeId: run.startNodeId }, host);
  } catch (err) {
    outcome = { status: 'failed' as const, output: null, error: { message: (err as Error).message, nodeId: null }, costCredits: 0 };
  }
  const finishedAt = new Date();
  Object.assign(run, {
    status: outcome.status,
    output: outcome.output,
    error: outcome.error?.message ?? null,
    errorNodeId: outcome.error?.nodeId ?? null,
    costCredits: 0, // simulations consume nothing
    finishedAt,
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    updatedAt: finishedAt,
  });
  for (const s of steps.values()) {
    em.create(RunStepSchema, {
      id: `${run.id}:${s.nodeId}`,
      runId: run.id,
      workspaceId: run.workspaceId,
      nodeId: s.nodeId,
      nodeType: s.nodeType,
      nodeName: s.nodeName,
      seq: s.seq,
      status: s.status,
      attempts: s.attempts,
      input: s.input,
      output: s.output,
      error: s.error,
      startedAt: s.startedAt ? new Date(s.startedAt) : null,
      finishedAt: s.finishedAt ? new Date(s.finishedAt) : null,
      durationMs: s.durationMs,
    });
  }
  for (const l of logs) {
    em.create(RunLogSchema, { id: `${run.id}:${l.seq}`, runId: run.id, workspaceId: run.workspaceId, seq: l.seq, nodeId: l.nodeId, level: l.level, message: l.message, data: l.data, createdAt: new Date(l.createdAt) });
  }
  await em.flush();
}

function simulatedLog(seq: number, nodeId: string, message: string): LogRecord {
  return { seq, nodeId, level: 'info', message, data: { simulated: true }, createdAt: new Date().toISOString() };
}

/** Cancels a non-terminal run through the engine; 409 when it already ended. */
export async function cancelRun(em: EntityManager, launcher: RunLauncher, principal: WorkspacePrincipal, run: Run): Promise<Run> {
  if (isTerminal(run.status)) throw conflict(`The run is already ${run.status}.`);
  await launcher.cancel(run.id);
  // Recorded now so the answer is final; the execution's own record agrees (terminal states are never overwritten).
  await em.getConnection().execute(
    `update runs set status = 'canceled', waits = '[]'::jsonb, cancel_reason = coalesce(cancel_reason, 'Canceled on request'),
            finished_at = coalesce(finished_at, now()),
            duration_ms = coalesce(duration_ms, (extract(epoch from (now() - coalesce(started_at, created_at))) * 1000)::int),
            updated_at = now()
      where id = ? and status not in ('succeeded', 'failed', 'canceled')`,
    [run.id],
  );
  recordAudit(em, principal, { action: 'run.cancel', severity: 'info', workspaceId: run.workspaceId, targetType: 'run', targetId: run.id });
  await em.flush();
  return em.fork().findOneOrFail(RunSchema, { id: run.id });
}

/** A fresh run of the same graph (same pinned version, or the same candidate snapshot) from the original input. */
export async function rerun(em: EntityManager, launcher: RunLauncher, principal: WorkspacePrincipal, original: Run, wf: Workflow | null): Promise<Run> {
  let graph: WorkflowGraph | null = original.graphSnapshot;
  if (!graph && original.versionId) {
    const version = await em.findOne(WorkflowVersionSchema, { id: original.versionId });
    if (version) graph = { nodes: version.nodes, edges: version.edges };
  }
  if (!graph || !wf) throw conflict('The workflow version this run executed no longer exists; it cannot be re-run.');
  const run = createRunRow(em, principal, wf, {
    trigger: 'manual',
    input: original.input,
    startNodeId: original.startNodeId,
    versionId: original.versionId,
    snapshot: original.graphSnapshot,
    dryRun: original.dryRun,
    requestedTarget: original.executionEvidence.requestedTarget,
  });
  if (original.dryRun) {
    await dryRun(em, run, graph);
    return run;
  }
  await em.flush();
  return launch(em, launcher, run, graph);
}
