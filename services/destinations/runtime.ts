import type { EntityManager } from '@mikro-orm/postgresql';
import {
  TargetActivationSchema,
  WorkflowTargetSchema,
  WorkflowVersionSchema,
  type RunExecutionTarget,
  type TargetActivation,
  type Workflow,
  type WorkflowTarget,
  type WorkflowVersion,
} from '../../db/entities';
import { notFound } from '../kernel/errors';
import { runnableActiveVersion, whyNotRunnable, type RunnableVersion } from '../workflows/runnable';
import { DESTINATION_NOT_FOUND } from './model';

/**
 * Running a destination: which version a live run of a destination executes (its active
 * version, published under a current approval, with the deployment enabled), what the run
 * records about it, and how webhooks and schedules of previews find their version. Nothing
 * here ever falls back to production: a destination that cannot run refuses.
 */

/** A destination of this workflow; 404 for unknown ids and destinations of other workflows or workspaces. */
export async function findTargetOf(em: EntityManager, wf: Pick<Workflow, 'id' | 'workspaceId'>, targetId: string): Promise<WorkflowTarget> {
  const target = await em.findOne(WorkflowTargetSchema, { id: targetId, workflowId: wf.id, workspaceId: wf.workspaceId });
  if (!target) throw notFound(DESTINATION_NOT_FOUND);
  return target;
}

export type LiveTargetVersion =
  | { kind: 'live'; target: WorkflowTarget; version: WorkflowVersion; activation: TargetActivation; executionTarget: RunExecutionTarget }
  | { kind: 'refused'; reason: string };

export function executionTargetOf(target: WorkflowTarget, activation: TargetActivation): RunExecutionTarget {
  return { targetId: target.id, kind: target.kind, name: target.name, activationId: activation.id, generation: activation.generation };
}

/**
 * Execute rule 2: the version a live run of `target` executes, or why it cannot run. The
 * workflow must be allowed to run at all (not trashed or disabled; Production also deployed),
 * the destination enabled with an active version, and that version published under a session
 * approval.
 */
export async function liveTargetVersion(em: EntityManager, wf: Workflow | null, target: WorkflowTarget): Promise<LiveTargetVersion> {
  if (!wf) return { kind: 'refused', reason: 'The workflow does not exist.' };
  const refusal = whyNotRunnable(wf, target.kind === 'production' ? 'active' : 'candidate');
  if (refusal) return { kind: 'refused', reason: refusal };
  if (!target.enabled || !target.activeVersionId || !target.activeActivationId) {
    return { kind: 'refused', reason: `Destination "${target.name}" has no enabled deployment: publish it first.` };
  }
  if (target.kind === 'production' && wf.activeVersionId !== target.activeVersionId) {
    return { kind: 'refused', reason: `Destination "${target.name}" is not the deployed version of the workflow.` };
  }
  const activation = await em.findOne(TargetActivationSchema, { id: target.activeActivationId });
  if (!activation?.approvalId) {
    return {
      kind: 'refused',
      reason: `The active version of destination "${target.name}" has no current approval: publish an approved version.`,
    };
  }
  const version = await em.findOne(WorkflowVersionSchema, { id: target.activeVersionId });
  if (!version) return { kind: 'refused', reason: `The active version of destination "${target.name}" no longer exists.` };
  return { kind: 'live', target, version, activation, executionTarget: executionTargetOf(target, activation) };
}

export type RunnableTargetVersion =
  (RunnableVersion & { executionTarget?: undefined }) | { kind: 'runnable'; version: WorkflowVersion; executionTarget: RunExecutionTarget };

/**
 * The version a trigger of a destination (webhook, schedule, event source) runs now. A
 * Production trigger (or one made before destinations, `targetId` null) follows the workflow's
 * deployed version as it always has; a preview's runs its approved active version, never
 * Production's.
 */
export async function runnableVersionForTrigger(
  em: EntityManager,
  wf: Workflow | null,
  targetId: string | null,
): Promise<RunnableTargetVersion> {
  const target = targetId ? await em.findOne(WorkflowTargetSchema, { id: targetId }) : null;
  if (!target || target.kind === 'production') {
    if (targetId && !target) return { kind: 'refused', reason: 'The destination no longer exists.' };
    return runnableActiveVersion(em, wf);
  }
  const live = await liveTargetVersion(em, wf, target);
  if (live.kind === 'refused') return live;
  return { kind: 'runnable', version: live.version, executionTarget: live.executionTarget };
}
