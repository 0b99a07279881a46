import type { EntityManager } from '@mikro-orm/postgresql';
import { RunLogSchema, RunStepSchema, type Run } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';
import { runDryRunInSandbox, type DryRunResult } from '../kernel/sandbox/sandbox';
import { runTableNode } from '../databases';
import { withJsRuntime } from '../extflow/jsRuntime';
import { storableString, toStorable } from '../kernel/storableText';
import { runStepId } from './store';

/**
 * Interprets the graph in the sandbox host (services/kernel/sandbox/sandbox.ts runDryRunInSandbox), never on
 * this event loop: pure nodes and code nodes (sandboxed, no effects) run for real; HTTP calls,
 * waits, approvals, events and subworkflows are simulated and marked so; table reads are
 * answered here, where the database is. A graph over the dry-run deadline or heap cap ends
 * `failed` with a message saying so. The run row always ends finished: when interpreting or
 * recording fails, it ends `failed` with the reason (never left `queued`, where it would count
 * against run admission for ever).
 */
export async function dryRun(em: EntityManager, run: Run, graph: WorkflowGraph): Promise<void> {
  try {
    await interpretAndRecord(em, run, graph);
  } catch (err) {
    await finishFailed(em, run, err);
  }
}

/** Ends a dry run whose result could not be recorded: `failed`, with why, and without its output. */
async function finishFailed(em: EntityManager, run: Run, err: unknown): Promise<void> {
  const finishedAt = new Date();
  const reason = storableString(err instanceof Error ? err.message : String(err)).slice(0, 2_000);
  Object.assign(run, {
    status: 'failed',
    output: null,
    error: `The dry run could not be recorded: ${reason}`,
    errorNodeId: null,
    costCredits: 0,
    finishedAt,
    durationMs: finishedAt.getTime() - (run.startedAt ?? run.createdAt).getTime(),
    updatedAt: finishedAt,
  });
  await em.flush();
}

async function interpretAndRecord(em: EntityManager, run: Run, graph: WorkflowGraph): Promise<void> {
  const startedAt = new Date();
  run.status = 'running';
  run.startedAt = startedAt;
  let result: DryRunResult;
  try {
    result = await runDryRunInSandbox(
      run.workspaceId,
      { graph: withJsRuntime(graph), input: run.input, trigger: run.trigger, startNodeId: run.startNodeId ?? null },
      (config) => runTableNode(em.fork(), run.workspaceId, 'table_read', config),
    );
  } catch (err) {
    result = {
      outcome: { status: 'failed', output: null, error: { message: (err as Error).message, nodeId: null }, costCredits: 0 },
      steps: [],
      logs: [],
    };
  }
  const { outcome, steps, logs } = result;
  const finishedAt = new Date();
  Object.assign(run, {
    status: outcome.status,
    // As the ORM stores them (db/wellFormedTypes.ts), so the answer shows what a later read shows.
    output: toStorable(outcome.output),
    error: outcome.error ? storableString(outcome.error.message) : null,
    errorNodeId: outcome.error?.nodeId ?? null,
    costCredits: 0, // simulations consume nothing
    finishedAt,
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    updatedAt: finishedAt,
  });
  // Steps and logs go in their own unit of work: if they cannot be written, the run row still can.
  const rows = em.fork();
  for (const s of steps) {
    rows.create(RunStepSchema, {
      id: runStepId(run.id, s),
      runId: run.id,
      workspaceId: run.workspaceId,
      nodeId: s.nodeId,
      iteration: s.iteration ?? 0,
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
    rows.create(RunLogSchema, {
      id: `${run.id}:${l.seq}`,
      runId: run.id,
      workspaceId: run.workspaceId,
      seq: l.seq,
      nodeId: l.nodeId,
      level: l.level,
      message: l.message,
      data: l.data,
      createdAt: new Date(l.createdAt),
    });
  }
  await rows.flush();
  await em.flush();
}
