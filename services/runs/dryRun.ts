import type { EntityManager } from '@mikro-orm/postgresql';
import { RunLogSchema, RunStepSchema, type Run } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';
import { runDryRunInSandbox } from '../sandbox';
import { runTableNode } from '../databases';

/**
 * Interprets the graph in the sandbox host (services/sandbox.ts runDryRunInSandbox), never on
 * this event loop: pure nodes and code nodes (sandboxed, no effects) run for real; HTTP calls,
 * waits, approvals, events and subworkflows are simulated and marked so; table reads are
 * answered here, where the database is. A graph over the dry-run deadline or heap cap ends
 * `failed` with a message saying so.
 */
export async function dryRun(em: EntityManager, run: Run, graph: WorkflowGraph): Promise<void> {
  const startedAt = new Date();
  run.status = 'running';
  run.startedAt = startedAt;
  let result;
  try {
    result = await runDryRunInSandbox(
      run.workspaceId,
      { graph, input: run.input, trigger: run.trigger, startNodeId: run.startNodeId ?? null },
      (config) => runTableNode(em.fork(), run.workspaceId, 'table_read', config),
    );
  } catch (err) {
    result = { outcome: { status: 'failed' as const, output: null, error: { message: (err as Error).message, nodeId: null }, costCredits: 0 }, steps: [], logs: [] };
  }
  const { outcome, steps, logs } = result;
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
  for (const s of steps) {
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
