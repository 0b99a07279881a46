import type { EntityManager } from '@mikro-orm/postgresql';
import {
  WorkflowSchema,
  WorkflowTargetSchema,
  WorkflowVersionSchema,
  type Run,
  type RunExecutionTarget,
  type RunTrigger,
  type Workflow,
} from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';
import { conflict, invalidInput, unavailable } from '../kernel/errors';
import type { RunLauncher } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { candidateVersionId, loadWorkflow, validateWorkflowGraph, type VersionGraphCache } from '../workflows';
import { dryRun } from './dryRun';
import { whyNotRunnable } from '../workflows/runnable';
import { writeRunRow, writeRunRowWithin, type NewRunRow } from './runRows';
import type { AdmitRun } from '../kernel/runAdmission';
import { loadRun } from './views';
import { findTargetOf, liveTargetVersion } from '../destinations/runtime';

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

/** The destination an `executionTargetId` execution ran (`execution.destination`). */
export interface ExecutedDestination {
  targetId: string;
  kind: 'production' | 'preview';
  name: string;
  versionId: string;
  /** A simulation of the destination's candidate, rather than a live run of its active version. */
  simulated: boolean;
}

interface ChosenGraph {
  graph: WorkflowGraph;
  versionId: string | null;
  /** Set for candidate runs, whose graph is not a stored version. */
  snapshot: WorkflowGraph | null;
  dryRun: boolean;
  requestedTarget?: 'active' | 'candidate';
  executionTarget?: RunExecutionTarget;
  simulationTargetId?: string;
  destination?: ExecutedDestination;
}

/**
 * Execute rule 2: a named destination. A simulation (dry run) runs the destination's
 * candidate and keeps its identity; a live run needs its active version published under a
 * current approval with the deployment enabled. A foreign destination is not found and an
 * unavailable one refused: neither ever falls back to production.
 */
async function chooseDestinationGraph(
  em: EntityManager,
  wf: Workflow,
  body: ExecuteInput & { executionTargetId: string },
): Promise<ChosenGraph> {
  const target = await findTargetOf(em, wf, body.executionTargetId);
  const simulate = body.dryRun === true || (body.target === 'candidate' && body.dryRun !== false);
  if (simulate) {
    const refusal = whyNotRunnable(wf, 'candidate');
    if (refusal) throw invalidInput(refusal);
    const version = target.candidateVersionId ? await em.findOne(WorkflowVersionSchema, { id: target.candidateVersionId }) : null;
    if (!version)
      throw conflict(`Destination "${target.name}" has no candidate version to simulate.`, {
        code: 'workflow_target_unavailable',
        details: { targetId: target.id },
      });
    if (body.expectedVersionId !== undefined && body.expectedVersionId !== version.id) {
      throw conflict(`The candidate of destination "${target.name}" changed since expectedVersionId was read.`, {
        code: 'workflow_candidate_changed',
        details: { targetId: target.id, candidateVersionId: version.id },
      });
    }
    return {
      graph: { nodes: version.nodes, edges: version.edges },
      versionId: version.id,
      snapshot: null,
      dryRun: true,
      requestedTarget: 'candidate',
      simulationTargetId: target.id,
      destination: { targetId: target.id, kind: target.kind, name: target.name, versionId: version.id, simulated: true },
    };
  }
  if (body.target === 'candidate') {
    throw invalidInput(
      'A destination runs live only at its active version: omit target "candidate", or simulate its candidate with dryRun: true.',
    );
  }
  const live = await liveTargetVersion(em, wf, target);
  if (live.kind === 'refused') throw conflict(live.reason, { code: 'workflow_target_unavailable', details: { targetId: target.id } });
  if (body.expectedVersionId !== undefined && body.expectedVersionId !== live.version.id) {
    throw conflict(`The active version of destination "${target.name}" is not expectedVersionId.`, {
      details: { targetId: target.id, activeVersionId: live.version.id },
    });
  }
  return {
    graph: { nodes: live.version.nodes, edges: live.version.edges },
    versionId: live.version.id,
    snapshot: null,
    dryRun: false,
    requestedTarget: 'active',
    executionTarget: live.executionTarget,
    destination: { targetId: target.id, kind: target.kind, name: target.name, versionId: live.version.id, simulated: false },
  };
}

/** Applies the spec's execute rules 1 to 4 and the runnable rule, and picks the graph to run. */
async function chooseGraph(
  em: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  body: ExecuteInput,
  versions: VersionGraphCache | undefined,
): Promise<ChosenGraph> {
  const isGateway = principal.kind === 'api_key' && principal.scope === 'end_user_gateway';
  if (!isGateway && (body.endUser !== undefined || body.message !== undefined)) {
    throw invalidInput('endUser and message are accepted only from a product gateway key.');
  }
  if (body.executionTargetId !== undefined) return chooseDestinationGraph(em, wf, { ...body, executionTargetId: body.executionTargetId });
  const refusal = whyNotRunnable(wf, body.target);
  if (refusal) throw invalidInput(refusal);

  if (body.target === 'active') {
    const version = versions
      ? await versions.get(em, wf.workspaceId, wf.activeVersionId!)
      : await em
          .findOneOrFail(WorkflowVersionSchema, { id: wf.activeVersionId! })
          .then((v) => ({ id: v.id, graph: { nodes: v.nodes, edges: v.edges } }));
    return { graph: version.graph, versionId: version.id, snapshot: null, dryRun: body.dryRun === true };
  }

  const graph = { nodes: wf.nodes, edges: wf.edges };
  const candidateId = candidateVersionId(graph);
  if (body.dryRun !== false) return { graph, versionId: candidateId, snapshot: graph, dryRun: true };
  if (body.confirm !== true) throw invalidInput('Live candidate execution requires confirm: true.');
  if (!body.expectedVersionId)
    throw invalidInput("Live candidate execution requires expectedVersionId (the workflow's candidateVersionId).");
  if (body.expectedVersionId !== candidateId) {
    throw conflict('The candidate changed since expectedVersionId was read; fetch the workflow and retry with its candidateVersionId.', {
      code: 'workflow_candidate_changed',
      details: { candidateVersionId: candidateId },
    });
  }
  return { graph, versionId: candidateId, snapshot: graph, dryRun: false };
}

export type ExecuteResult =
  { kind: 'queued'; run: Run; destination?: ExecutedDestination } | { kind: 'dry'; run: Run; destination?: ExecutedDestination };

/**
 * Executes a workflow of the principal's workspace: a dry run is interpreted here with
 * simulated side effects and stored finished; a live run is stored `queued` and handed to the
 * durable engine. When the engine refuses the start, the run is left `canceled` with the
 * reason and the call fails `unavailable`. `opts.dryRunGraph` changes the graph a dry run
 * interprets (not the graph stored on the run); `opts.admit` holds a live run at the door while
 * its workspace has too many active (and refuses it, 503, after its wait); `opts.versions` reads
 * the active version's graph from the process's cache.
 */
export async function executeWorkflow(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  workflowId: string,
  body: ExecuteInput,
  trigger: RunTrigger = 'api',
  opts: { dryRunGraph?: (graph: WorkflowGraph) => WorkflowGraph; admit?: AdmitRun; versions?: VersionGraphCache } = {},
): Promise<ExecuteResult> {
  const wf = await loadWorkflow(em, principal, workflowId);
  const chosen = await chooseGraph(em, principal, wf, body, opts.versions);
  const validation = validateWorkflowGraph(chosen.graph);
  if (!validation.report.valid) {
    throw invalidInput('The workflow graph is not valid; fix it before executing.', { details: { ...validation } });
  }
  if (body.startNodeId !== undefined && !chosen.graph.nodes.some((n) => n.id === body.startNodeId)) {
    throw invalidInput(`startNodeId "${body.startNodeId}" is not a node of this workflow.`);
  }
  const run = await writeAdmitted(em, !chosen.dryRun ? opts.admit : undefined, wf.workspaceId, {
    workflow: wf,
    trigger,
    input: body.input ?? null,
    startNodeId: body.startNodeId ?? null,
    versionId: chosen.versionId,
    graphSnapshot: chosen.snapshot,
    dryRun: chosen.dryRun,
    requestedTarget: chosen.requestedTarget ?? body.target,
    createdBy: createdBy(principal),
    endUserExternalId: body.endUser?.externalId ?? null,
    executionTarget: chosen.executionTarget ?? null,
    simulationTargetId: chosen.simulationTargetId ?? null,
  });
  const destination = chosen.destination ? { destination: chosen.destination } : {};
  if (chosen.dryRun) {
    // A caller may change what a simulation interprets (the extflow smoke test's pinned data); the run keeps the real graph.
    await dryRun(em, run, opts.dryRunGraph ? opts.dryRunGraph(chosen.graph) : chosen.graph);
    return { kind: 'dry', run, ...destination };
  }
  return { kind: 'queued', run: await launch(em, launcher, run, chosen.graph), ...destination };
}

/**
 * Writes a new run row, through `admit` when given: admission's decision and the row are one
 * statement (so other API processes count the row before they admit), managed by `em`.
 */
async function writeAdmitted(em: EntityManager, admit: AdmitRun | undefined, workspaceId: string, row: NewRunRow): Promise<Run> {
  if (!admit) return writeRunRow(em, row);
  return admit(workspaceId, (cap) => (cap === null ? writeRunRow(em, row) : writeRunRowWithin(em, row, cap)));
}

const createdBy = (principal: WorkspacePrincipal) => ({
  keyId: principal.kind === 'api_key' ? principal.apiKeyId : null,
  userId: principal.userId,
});

async function launch(em: EntityManager, launcher: RunLauncher, run: Run, graph: WorkflowGraph): Promise<Run> {
  try {
    await launcher.start(run, graph);
  } catch (err) {
    run.status = 'canceled';
    run.cancelReason = `The durable engine refused to start the run: ${(err as Error).message}`;
    run.finishedAt = new Date();
    run.updatedAt = new Date();
    await em.flush();
    throw unavailable('The run could not be handed to the durable engine; it was canceled.', {
      details: { runId: run.id, reason: run.cancelReason },
    });
  }
  return run;
}

/**
 * Re-runs a live run of the principal's workspace: a fresh queued run of the same graph (the
 * same pinned version, or the same candidate snapshot) from the original input, if the
 * workflow may still run that target. A dry run is refused (conflict): it simulated a graph
 * rather than ran one, so there is nothing live to repeat; execute the workflow instead.
 */
export async function rerunRun(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  runId: string,
  admit?: AdmitRun,
): Promise<Run> {
  const original = await loadRun(em, principal, runId);
  if (original.dryRun) {
    throw conflict('A dry run cannot be re-run: it was a simulation. Execute the workflow again instead (dry or live).', {
      code: 'run_dry_run_not_rerunnable',
      details: { workflowId: original.workflowId },
    });
  }
  const wf = await em.findOne(WorkflowSchema, { id: original.workflowId, workspaceId: original.workspaceId });
  let graph: WorkflowGraph | null = original.graphSnapshot;
  if (!graph && original.versionId) {
    const version = await em.findOne(WorkflowVersionSchema, { id: original.versionId });
    if (version) graph = { nodes: version.nodes, edges: version.edges };
  }
  if (!graph || !wf) throw conflict('The workflow version this run executed no longer exists; it cannot be re-run.');
  let executionTarget: RunExecutionTarget | null = null;
  if (original.executionTarget) {
    // A destination's run re-runs only while that destination is live; never on production instead.
    const target = await em.findOne(WorkflowTargetSchema, { id: original.executionTarget.targetId });
    const live = target
      ? await liveTargetVersion(em, wf, target)
      : { kind: 'refused' as const, reason: 'The destination no longer exists.' };
    if (live.kind === 'refused') throw conflict(`The run cannot be re-run: ${live.reason}`, { code: 'workflow_not_runnable' });
    executionTarget = live.executionTarget;
  } else {
    const refusal = whyNotRunnable(wf, original.executionEvidence.requestedTarget);
    if (refusal) throw conflict(`The run cannot be re-run: ${refusal}`, { code: 'workflow_not_runnable' });
  }
  const run = await writeAdmitted(em, admit, wf.workspaceId, {
    workflow: wf,
    trigger: 'manual',
    input: original.input,
    startNodeId: original.startNodeId,
    versionId: original.versionId,
    graphSnapshot: original.graphSnapshot,
    requestedTarget: original.executionEvidence.requestedTarget,
    createdBy: createdBy(principal),
    executionTarget,
  });
  return launch(em, launcher, run, graph);
}
