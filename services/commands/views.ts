/** The public shapes of command jobs, threads and schedules. */
import type {
  CommandArtifact,
  CommandAttachment,
  CommandJobRow,
  CommandJobStatus,
  CommandScheduleRow,
  CommandThreadRow,
  CommandTrace,
} from '../../db/entities';
import type { Principal } from '../kernel/principal';
import { projectFor } from '../kernel/redaction';

export interface CommandProgressEvent {
  at: string;
  state: string;
  message: string;
}

export interface CommandProgress {
  runId?: string;
  state: string;
  message: string;
  events: CommandProgressEvent[];
}

export interface CommandJobView {
  id: string;
  threadId: string;
  planId: string | null;
  status: CommandJobStatus;
  traces: CommandTrace[];
  confirmation: { id: string; expiresAt: string } | null;
  progress: CommandProgress;
  attachments: CommandAttachment[];
  artifacts: CommandArtifact[];
  costCredits: number;
  createdAt: string;
  updatedAt: string;
}

/** Fields viewer, personal and copilot principals do not see (lifecycle metadata only remains). */
export const COMMAND_JOB_RESTRICTED_FIELDS = ['traces', 'confirmation', 'progress', 'attachments', 'artifacts'] as const;

const DEFAULT_PROGRESS: Record<CommandJobStatus, string> = {
  queued: 'Waiting for earlier jobs of the thread.',
  running: 'Working.',
  waiting_confirmation: 'Waiting for confirmation of the plan.',
  succeeded: 'Done.',
  failed: 'The job failed.',
  canceled: 'The job was canceled.',
  blocked: 'The confirmation expired; the plan was not executed.',
};

/** The job object; `events` come from the job's live buffer (a workflow query), empty without one. */
export function jobView(row: CommandJobRow, events: CommandProgressEvent[] = []): CommandJobView {
  const waiting = row.status === 'waiting_confirmation' && row.confirmation_id && row.confirmation_expires_at;
  return {
    id: row.id,
    threadId: row.thread_id,
    planId: row.plan_id,
    status: row.status,
    traces: row.traces,
    confirmation: waiting ? { id: row.confirmation_id!, expiresAt: new Date(row.confirmation_expires_at!).toISOString() } : null,
    progress: {
      ...(row.progress_run_id ? { runId: row.progress_run_id } : {}),
      state: row.status,
      message: row.progress_message ?? DEFAULT_PROGRESS[row.status],
      events,
    },
    attachments: row.attachments,
    artifacts: row.artifacts,
    costCredits: Number(row.cost_credits),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The job as `principal` may see it: full, or the workspace-safe.v1 projection. */
export function projectJob(principal: Principal, row: CommandJobRow, events: CommandProgressEvent[] = []) {
  return projectFor(principal, { ...jobView(row, events) }, COMMAND_JOB_RESTRICTED_FIELDS);
}

export function threadView(row: CommandThreadRow) {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    title: row.title,
    createdById: row.created_by_id,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export function scheduleView(row: CommandScheduleRow) {
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    createdById: row.created_by_id,
    title: row.title,
    prompt: row.prompt,
    cron: row.cron,
    timezone: row.timezone,
    enabled: row.enabled,
    threadId: row.thread_id,
    nextRunAt: iso(row.next_run_at),
    lastRunAt: iso(row.last_run_at),
    runCount: row.run_count,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}
