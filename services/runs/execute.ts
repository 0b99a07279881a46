import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowSchema, WorkflowVersionSchema, type Run, type RunTrigger, type Workflow } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';
import { conflict, invalidInput, unavailable } from '../errors';
import type { RunLauncher } from '../ports';
import type { WorkspacePrincipal } from '../principal';
import { candidateVersionId, loadWorkflow, validateWorkflowGraph } from '../workflows';
import { dryRun } from './dryRun';
import { whyNotRunnable } from './runnable';
import { writeRunRow } from './runRows';
import { loadRun } from './views';

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

/** Applies the spec's execute rules 1 to 4 and the runnable rule, and picks the graph to run. */
async function chooseGraph(em: EntityManager, principal: WorkspacePrincipal, wf: Workflow, body: ExecuteInput): Promise<ChosenGraph> {
  const isGateway = principal.kind === 'api_key' && principal.scope === 'end_user_gateway';
  if (!isGateway && (body.endUser !== undefined || body.message !== undefined)) {
    throw invalidInput('endUser and message are accepted only from a product gateway key.');
  }
  if (body.executionTargetId !== undefined) {
    // Named destinations arrive with the destinations issue; never fall back to production.
    throw invalidInput(`Execution target "${body.executionTargetId}" is not available for this workflow.`);
  }
  const refusal = whyNotRunnable(wf, body.target);
  if (refusal) throw invalidInput(refusal);

  if (body.target === 'active') {
    const version = await em.findOneOrFail(WorkflowVersionSchema, { id: wf.activeVersionId! });
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
 * Executes a workflow of the principal's workspace: a dry run is interpreted here with
 * simulated side effects and stored finished; a live run is stored `queued` and handed to the
 * durable engine. When the engine refuses the start, the run is left `canceled` with the
 * reason and the call fails `unavailable`.
 */
export async function executeWorkflow(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  workflowId: string,
  body: ExecuteInput,
  trigger: RunTrigger = 'api',
): Promise<ExecuteResult> {
  const wf = await loadWorkflow(em, principal, workflowId);
  const chosen = await chooseGraph(em, principal, wf, body);
  const validation = validateWorkflowGraph(chosen.graph);
  if (!validation.report.valid) {
    throw invalidInput('The workflow graph is not valid; fix it before executing.', { details: { ...validation } });
  }
  if (body.startNodeId !== undefined && !chosen.graph.nodes.some((n) => n.id === body.startNodeId)) {
    throw invalidInput(`startNodeId "${body.startNodeId}" is not a node of this workflow.`);
  }
  const run = await writeRunRow(em, {
    workflow: wf,
    trigger,
    input: body.input ?? null,
    startNodeId: body.startNodeId ?? null,
    versionId: chosen.versionId,
    graphSnapshot: chosen.snapshot,
    dryRun: chosen.dryRun,
    requestedTarget: body.target,
    createdBy: createdBy(principal),
    endUserExternalId: body.endUser?.externalId ?? null,
  });
  if (chosen.dryRun) {
    await dryRun(em, run, chosen.graph);
    return { kind: 'dry', run };
  }
  return { kind: 'queued', run: await launch(em, launcher, run, chosen.graph) };
}

const createdBy = (principal: WorkspacePrincipal) => ({ keyId: principal.kind === 'api_key' ? principal.apiKeyId : null, userId: principal.userId });

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

/**
 * Re-runs a live run of the principal's workspace: a fresh queued run of the same graph (the
 * same pinned version, or the same candidate snapshot) from the original input, if the
 * workflow may still run that target. A dry run is refused (conflict): it simulated a graph
 * rather than ran one, so there is nothing live to repeat; execute the workflow instead.
 */
export async function rerunRun(em: EntityManager, launcher: RunLauncher, principal: WorkspacePrincipal, runId: string): Promise<Run> {
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
  const refusal = whyNotRunnable(wf, original.executionEvidence.requestedTarget);
  if (refusal) throw conflict(`The run cannot be re-run: ${refusal}`, { code: 'workflow_not_runnable' });
  const run = await writeRunRow(em, {
    workflow: wf,
    trigger: 'manual',
    input: original.input,
    startNodeId: original.startNodeId,
    versionId: original.versionId,
    graphSnapshot: original.graphSnapshot,
    requestedTarget: original.executionEvidence.requestedTarget,
    createdBy: createdBy(principal),
  });
  return launch(em, launcher, run, graph);
}
