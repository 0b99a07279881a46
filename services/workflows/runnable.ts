import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowVersionSchema, type Workflow, type WorkflowVersion } from '../../db/entities';

/** What a run executes: the workflow's pinned active version, or its draft (the candidate). */
export type RunTarget = 'active' | 'candidate';

/**
 * The one rule of whether a workflow may run now, shared by every path that starts a run:
 * execute, rerun, webhooks (invoke and outbox dispatch), schedules and subworkflows.
 *
 * - A trashed or disabled workflow runs nothing, whatever the target.
 * - An `active` run needs status `deployed` and an active version. A workflow moved to `draft`
 *   runs nothing live until it is deployed again, even when it still has an active version
 *   (import-replace moves it to `draft` but keeps the pinned version for the versions list).
 * - A `candidate` run (testing the draft) needs nothing more.
 *
 * Returns why the workflow cannot run, or null when it can. Callers choose the error kind.
 */
export function whyNotRunnable(wf: Workflow, target: RunTarget): string | null {
  if (wf.trashed) return 'A trashed workflow cannot run; restore it first.';
  if (wf.status === 'disabled') return 'The workflow is disabled; enable it before running it.';
  if (target === 'candidate') return null;
  if (!wf.activeVersionId) {
    return 'The workflow has no deployed version. Deploy it first (POST /deploy), or execute target "candidate" to test the draft.';
  }
  if (wf.status !== 'deployed') {
    return 'The workflow is a draft (its active version is not deployed); deploy it again before running it, or execute target "candidate" to test the draft.';
  }
  return null;
}

export const isRunnable = (wf: Workflow, target: RunTarget): boolean => whyNotRunnable(wf, target) === null;

export type RunnableVersion = { kind: 'runnable'; version: WorkflowVersion } | { kind: 'refused'; reason: string };

/**
 * The active version a workflow runs now (webhooks, schedules, subworkflows), or why it
 * cannot run. A missing workflow is refused too, so callers need not check it first.
 */
export async function runnableActiveVersion(em: EntityManager, wf: Workflow | null): Promise<RunnableVersion> {
  if (!wf) return { kind: 'refused', reason: 'The workflow does not exist.' };
  const reason = whyNotRunnable(wf, 'active');
  if (reason) return { kind: 'refused', reason };
  const version = await em.findOne(WorkflowVersionSchema, { id: wf.activeVersionId! });
  if (!version) return { kind: 'refused', reason: 'The active version of the workflow no longer exists.' };
  return { kind: 'runnable', version };
}
