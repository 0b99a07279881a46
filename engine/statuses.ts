/**
 * The value lists of stored states, kinds and roles: which strings a column may hold. Pure data,
 * so every layer may import them: db/ types its entities with them, services/ check against them,
 * api/ builds its zod enums from them. (They used to live next to the entities in db/.)
 */

// API keys
/** The five scopes of the spec. A stored value outside this list fails authentication. */
export const API_KEY_SCOPES = ['workspace', 'personal', 'copilot', 'organization', 'end_user_gateway'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

// Command jobs
export const COMMAND_JOB_STATUSES = ['queued', 'running', 'waiting_confirmation', 'succeeded', 'failed', 'canceled', 'blocked'] as const;
export type CommandJobStatus = (typeof COMMAND_JOB_STATUSES)[number];
export const COMMAND_TERMINAL_STATUSES: readonly CommandJobStatus[] = ['succeeded', 'failed', 'canceled', 'blocked'];
export const COMMAND_ACTIVE_STATUSES: readonly CommandJobStatus[] = ['queued', 'running', 'waiting_confirmation'];

// Databases
/** Column types of user tables (spec: Database, table, column, row). */
export const COLUMN_TYPES = ['text', 'number', 'status', 'date', 'json'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

// Files
export const FILE_STATUSES = ['pending', 'pending_scan', 'ready', 'quarantined', 'deletion_requested', 'deleted'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

// Knowledge
export const INDEXING_STATUSES = ['pending', 'processing', 'ready', 'failed'] as const;
export type IndexingStatus = (typeof INDEXING_STATUSES)[number];
export const CONNECTOR_PROVIDER_IDS = ['drive', 'wiki', 'chat', 'repo'] as const;
export type ConnectorProviderId = (typeof CONNECTOR_PROVIDER_IDS)[number];
export const CONNECTOR_STATUSES = ['idle', 'syncing', 'succeeded', 'failed'] as const;
export type ConnectorStatus = (typeof CONNECTOR_STATUSES)[number];
export const SYNC_RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type SyncRunStatus = (typeof SYNC_RUN_STATUSES)[number];

// Local AI CLI workers
export const LOCAL_AI_CLI_KINDS = ['cliA', 'cliB'] as const;
export type LocalAiCliKind = (typeof LOCAL_AI_CLI_KINDS)[number];

// Research
export const RESEARCH_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type ResearchStatus = (typeof RESEARCH_STATUSES)[number];
export const RESEARCH_TERMINAL_STATUSES: readonly ResearchStatus[] = ['succeeded', 'failed', 'canceled'];
/** What happened to one URL a research run considered: only `stored` rows are source snapshots. */
export const RESEARCH_SOURCE_OUTCOMES = ['stored', 'skipped', 'refused', 'failed'] as const;
export type ResearchSourceOutcome = (typeof RESEARCH_SOURCE_OUTCOMES)[number];

// Runs, steps and logs
export const RUN_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'canceled'];
export const RUN_TRIGGERS = ['manual', 'webhook', 'schedule', 'copilot', 'api', 'email', 'rss'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
export const STEP_STATUSES = ['running', 'waiting', 'succeeded', 'failed', 'skipped', 'canceled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// Skills
export const SKILL_VISIBILITIES = ['private', 'workspace'] as const;
export type SkillVisibility = (typeof SKILL_VISIBILITIES)[number];
export const SKILL_PUBLICATION_STATUSES = ['draft', 'pending', 'published', 'archived'] as const;
export type SkillPublicationStatus = (typeof SKILL_PUBLICATION_STATUSES)[number];

// Workflows
export const WORKFLOW_STATUSES = ['draft', 'deployed', 'disabled'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

// Workspaces, users and invitations
export const MEMBERSHIP_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];
export const USER_STATUSES = ['active', 'invited', 'banned'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
export const INVITATION_STATUSES = ['pending', 'accepted', 'declined'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];
