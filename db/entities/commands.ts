/**
 * Command jobs area: rows of `command_threads`, `command_jobs` and `command_schedules`
 * (migration Migration20261123129000_commands). The area reads and writes them with SQL
 * (services/commands/store.ts) because every state change is a conditional update.
 */
import type { CommandJobStatus } from '../../engine/statuses';
import type { ReadyFileRef } from './files';
export type { CommandJobStatus } from '../../engine/statuses';

export type CommandConfirmationState = 'pending' | 'consumed' | 'resumed' | 'expired';

export interface CommandThreadRow {
  id: string;
  workspace_id: string;
  created_by_id: string;
  title: string;
  next_sequence: number;
  created_at: Date;
  updated_at: Date;
}

/** A file attached to a job, as it was when attached. */
export type CommandAttachment = ReadyFileRef;

export interface CommandArtifact {
  fileId: string;
  name: string;
  mimeType: string;
  status: 'registered' | 'completed';
  registeredAt: string;
  completedAt: string | null;
}

/** One tool call the model planned. */
export interface CommandPlannedAction {
  id: string;
  tool: string;
  arguments: Record<string, unknown>;
  sideEffects: boolean;
}

export interface CommandPlan {
  id: string;
  summary: string | null;
  actions: CommandPlannedAction[];
  requiresConfirmation: boolean;
}

export interface CommandCitation {
  runId?: string;
  documentId?: string;
  knowledgeBaseName?: string;
  title?: string;
}

/** What one executed action left behind. */
export interface CommandTrace {
  actionId: string;
  tool: string;
  arguments: Record<string, unknown>;
  status: 'succeeded' | 'failed' | 'skipped';
  output: unknown;
  error: string | null;
  runId: string | null;
  citations: CommandCitation[];
  startedAt: string;
  finishedAt: string;
}

export interface CommandResult {
  content: string;
  actions: Array<{ tool: string; status: string; runId?: string }>;
  citations: CommandCitation[];
  ragMode: 'none' | 'keyword' | 'hybrid';
}

export interface CommandJobRow {
  id: string;
  workspace_id: string;
  thread_id: string;
  sequence: number;
  created_by_id: string;
  status: CommandJobStatus;
  message: string;
  assistant_context: unknown;
  ai_provider: string | null;
  ai_model: string | null;
  attachments: CommandAttachment[];
  artifacts: CommandArtifact[];
  plan: CommandPlan | null;
  plan_id: string | null;
  confirmation_id: string | null;
  confirmation_expires_at: Date | null;
  confirmation_state: CommandConfirmationState | null;
  traces: CommandTrace[];
  progress_message: string | null;
  progress_run_id: string | null;
  result: CommandResult | null;
  error: string | null;
  attempt: number;
  retry_of_job_id: string | null;
  cost_credits: number;
  /** Started from a chat message (session send, schedule firing, or a retry of one): its end appends the assistant's message. */
  chat: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A chat message of a thread (table `command_messages`). */
export interface CommandMessageRow {
  id: string;
  workspace_id: string;
  thread_id: string;
  position: string;
  role: 'user' | 'assistant';
  content: string;
  job_id: string | null;
  job_status: CommandJobStatus | null;
  created_by_id: string | null;
  created_at: Date;
}

export interface CommandScheduleRow {
  id: string;
  workspace_id: string;
  created_by_id: string;
  title: string;
  prompt: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  thread_id: string | null;
  next_run_at: Date | null;
  last_run_at: Date | null;
  run_count: number;
  created_at: Date;
  updated_at: Date;
}
