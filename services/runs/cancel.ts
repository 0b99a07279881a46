import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, type Run } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { conflict } from '../kernel/errors';
import type { RunLauncher } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { markRunCanceled } from './store';
import { isTerminal, loadRun } from './views';

/** Cancels a non-terminal run of the principal's workspace through the engine; 409 when it already ended, 404 when it is not theirs. */
export async function cancelRun(em: EntityManager, launcher: RunLauncher, principal: WorkspacePrincipal, runId: string): Promise<Run> {
  const run = await loadRun(em, principal, runId);
  if (isTerminal(run.status)) throw conflict(`The run is already ${run.status}.`);
  await launcher.cancel(run.id);
  // Recorded now so the answer is final; the execution's own record agrees (terminal states are never overwritten).
  await markRunCanceled(em, run.id);
  recordAudit(em, principal, { action: 'run.cancel', severity: 'info', workspaceId: run.workspaceId, targetType: 'run', targetId: run.id });
  await em.flush();
  return em.fork().findOneOrFail(RunSchema, { id: run.id });
}
