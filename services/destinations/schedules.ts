import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowTargetSchema, type Workflow } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';
import type { ScheduleSync, ScheduleTarget } from '../kernel/ports';

/**
 * Schedules follow each destination's active pointer: publishing replaces the destination's
 * Temporal Schedules with those of the published version, stopping removes them. Production
 * keeps the schedule ids it always had; previews have their own.
 */
export function syncTargetSchedules(
  scheduler: ScheduleSync,
  wf: Workflow,
  graph: WorkflowGraph | null,
  target: ScheduleTarget,
): Promise<string[]> {
  return target.kind === 'production' ? scheduler.sync(wf, graph) : scheduler.sync(wf, graph, target);
}

/** Removes the Temporal Schedules of every destination of a workflow (before it is deleted). */
export async function removeAllTargetSchedules(em: EntityManager, scheduler: ScheduleSync, wf: Workflow): Promise<void> {
  await scheduler.sync(wf, null);
  const previews = await em.find(WorkflowTargetSchema, { workflowId: wf.id, kind: 'preview' });
  for (const t of previews) await scheduler.sync(wf, null, { targetId: t.id, kind: 'preview' });
}
