/**
 * Runs the durable engine starts by itself: subworkflow children and schedule firings. Their
 * activities record the run row here (idempotent on a derived id, as activities may be
 * retried) after the one runnable rule allows it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, WorkflowSchema } from '../../db/entities';
import { withConfigDefaults } from '../../engine/nodes';
import type { WorkflowGraph } from '../../engine/types';
import { sha256Hex } from '../kernel/ids';
import { toStorable } from '../kernel/storableText';
import { runnableActiveVersion } from '../workflows/runnable';
import { runnableVersionForTrigger } from '../destinations/runtime';
import { writeRunRow } from './runRows';

export class ChildRunRefused extends Error {}

/**
 * Creates (or finds, on a retry) the run row of a subworkflow node's child run and returns
 * the child's pinned graph and its workflow's name (the child execution's SvcName). The child must be a workflow of the same workspace that may run
 * now (runnable.ts); otherwise `ChildRunRefused` says why and no row is written.
 */
export async function prepareChildRun(
  em: EntityManager,
  args: { parentRunId: string; parentNodeId: string; workspaceId: string; workflowId: string; input: unknown },
): Promise<{ runId: string; graph: WorkflowGraph; name: string }> {
  const runId = `run_${sha256Hex(`${args.parentRunId}\0${args.parentNodeId}`).slice(0, 32)}`;
  const workflow = await em.findOne(WorkflowSchema, { id: args.workflowId, workspaceId: args.workspaceId });
  if (!workflow) throw new ChildRunRefused(`Subworkflow "${args.workflowId}" does not exist in this workspace.`);
  const runnable = await runnableActiveVersion(em, workflow);
  if (runnable.kind === 'refused') throw new ChildRunRefused(`Subworkflow "${args.workflowId}" cannot run: ${runnable.reason}`);
  const parent = await em.findOneOrFail(RunSchema, { id: args.parentRunId });
  const { version } = runnable;
  await writeRunRow(em, {
    id: runId,
    workflow,
    trigger: parent.trigger,
    input: toStorable(args.input),
    versionId: version.id,
    requestedTarget: 'active',
    parent: { runId: args.parentRunId, nodeId: args.parentNodeId },
    createdBy: { keyId: parent.createdByKeyId, userId: parent.createdByUserId },
  });
  return { runId, graph: withConfigDefaults({ nodes: version.nodes, edges: version.edges }), name: workflow.name };
}

/**
 * Creates the run row of a schedule-fired run (idempotent on its id) from the active version
 * of the schedule's destination (Production unless `targetId` names a preview). A workflow or
 * destination that may not run now (runnable.ts, destinations/runtime.ts) yields no graph: the
 * firing is recorded nowhere and skipped.
 */
export async function prepareScheduledRun(
  em: EntityManager,
  args: { runId: string; workspaceId: string; workflowId: string; input: unknown; targetId?: string },
): Promise<{ graph: WorkflowGraph | null; reason?: string }> {
  const workflow = await em.findOne(WorkflowSchema, { id: args.workflowId, workspaceId: args.workspaceId });
  const runnable = await runnableVersionForTrigger(em, workflow, args.targetId ?? null);
  if (runnable.kind === 'refused') return { graph: null, reason: runnable.reason };
  const { version } = runnable;
  await writeRunRow(em, {
    id: args.runId,
    workflow: workflow!,
    trigger: 'schedule',
    input: args.input,
    versionId: version.id,
    requestedTarget: 'active',
    executionTarget: runnable.executionTarget ?? null,
  });
  return { graph: withConfigDefaults({ nodes: version.nodes, edges: version.edges }) };
}
