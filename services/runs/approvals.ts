import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, type Run } from '../../db/entities';
import { conflict } from '../kernel/errors';
import type { RunLauncher } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { isTerminal, loadRun } from './views';

export interface ApprovalDecisionInput {
  decision: 'approved' | 'rejected';
  comment?: string;
  /** Which approval, when the run waits on several. */
  nodeId?: string;
}

/** The approval node a queued decision names, from the run's projection (the same refusals as the workflow's). */
function pendingApprovalNode(run: Run, nodeId: string | undefined): string {
  const pending = (run.waits ?? []).filter((w) => w.kind === 'approval').map((w) => w.nodeId);
  if (nodeId) {
    if (!pending.includes(nodeId)) throw conflict(`The run is not waiting for an approval at node "${nodeId}".`);
    return nodeId;
  }
  const [only] = pending;
  if (only === undefined) throw conflict('The run is not waiting for an approval.');
  if (pending.length > 1) throw conflict(`The run waits on several approvals (${pending.join(', ')}); name one with nodeId.`);
  return only;
}

/**
 * Decides a pending approval of a run of the principal's workspace, as the principal's user.
 * Missing and foreign runs are not found; a finished run, or one not waiting for that
 * approval, is a conflict. Returns the decision and the run as recorded after it.
 *
 * When no worker decides within `answerWaitMs` (a stalled or absent worker), the decision is
 * queued durably for the next worker instead of holding the request open into a 5xx: `queued`
 * is true and the run is as it stands (still waiting). The first decision of a node wins.
 */
export async function decideApproval(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  runId: string,
  input: ApprovalDecisionInput,
  answerWaitMs: number,
): Promise<{ approval: { nodeId: string; decision: string }; run: Run; queued: boolean }> {
  const run = await loadRun(em, principal, runId);
  if (isTerminal(run.status)) throw conflict(`The run is already ${run.status}.`);
  const request = { ...input, decidedBy: principal.userId };
  const outcome = await launcher.approve(run.id, request, answerWaitMs);
  if (outcome.kind === 'refused') throw conflict(outcome.reason);
  if (outcome.kind === 'no_answer') {
    const current = await em.fork().findOneOrFail(RunSchema, { id: run.id });
    if (isTerminal(current.status)) throw conflict(`The run is already ${current.status}.`);
    const nodeId = pendingApprovalNode(current, input.nodeId);
    if (!(await launcher.queueApproval(run.id, { ...request, nodeId }))) throw conflict('The run is no longer waiting for an approval.');
    return { approval: { nodeId, decision: input.decision }, run: current, queued: true };
  }
  // The execution has recorded the decision by now: read the row afresh, not from this request's identity map.
  const fresh = await em.fork().findOneOrFail(RunSchema, { id: run.id });
  return { approval: { nodeId: outcome.nodeId, decision: outcome.decision }, run: fresh, queued: false };
}
