import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, type Run } from '../../db/entities';
import { conflict } from '../errors';
import type { RunLauncher } from '../ports';
import type { WorkspacePrincipal } from '../principal';
import { isTerminal, loadRun } from './views';

export interface ApprovalDecisionInput {
  decision: 'approved' | 'rejected';
  comment?: string;
  /** Which approval, when the run waits on several. */
  nodeId?: string;
}

/**
 * Decides a pending approval of a run of the principal's workspace, as the principal's user.
 * Missing and foreign runs are not found; a finished run, or one not waiting for that
 * approval, is a conflict. Returns the decision and the run as recorded after it.
 */
export async function decideApproval(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  runId: string,
  input: ApprovalDecisionInput,
): Promise<{ approval: { nodeId: string; decision: string }; run: Run }> {
  const run = await loadRun(em, principal, runId);
  if (isTerminal(run.status)) throw conflict(`The run is already ${run.status}.`);
  const outcome = await launcher.approve(run.id, { ...input, decidedBy: principal.userId });
  if (outcome.kind === 'refused') throw conflict(outcome.reason);
  // The execution has recorded the decision by now: read the row afresh, not from this request's identity map.
  const fresh = await em.fork().findOneOrFail(RunSchema, { id: run.id });
  return { approval: { nodeId: outcome.nodeId, decision: outcome.decision }, run: fresh };
}
