import { ApiKeySchema, SessionSchema } from './auth';
import { AuditLogSchema } from './audit';
import { IdempotencyRecordSchema } from './idempotency';
import { InvitationSchema, MembershipSchema, UserSchema, WorkspaceSchema } from './workspaces';
import { WorkflowSchema, WorkflowVersionSchema } from './workflows';
import { ResumeTokenSchema, RunLogSchema, RunSchema, RunStepSchema } from './runs';
import { WebhookOutboxSchema, WebhookSchema } from './webhooks';
import { SmokeTestSchema } from './smokeTests';
import { WorkerHeartbeatSchema } from './workerHeartbeats';
import { FileScanSchema, StoredFileSchema } from './files';
import { CredentialSchema } from './credentials';
import { TargetActivationSchema, TargetApprovalSchema, TargetSourceSchema, WorkflowTargetSchema } from './destinations';
import { WorkflowMcpServerSchema } from './workflowMcp';
import { WorkflowReviewSchema, WorkspaceRepositorySchema } from './repository';
import {
  ConfigurationBaselineSchema,
  ConfigurationProposalSchema,
  ConfigurationReceiptSchema,
  ManagedTableSchema,
  UserDatabaseSchema,
  UserTableSchema,
} from './databases';
import { LocalAiCliSessionSchema } from './localAiCli';
import { OrganizationSchema, OrganizationWorkspaceSchema } from './organizations';
import {
  MailerGoogleDwdConfigSchema,
  MailerMessageSchema,
  MailerPollingGroupSchema,
  MailerReplyReservationSchema,
  MailerRouteSchema,
  MailerThreadSchema,
} from './mailer';
import { KnowledgeBaseSchema, KnowledgeConnectorSchema, KnowledgeDocumentSchema, KnowledgeSyncRunSchema } from './knowledge';
import { SkillSchema } from './skills';
import { ResearchRunSchema, ResearchSourceSchema } from './research';

/** Every entity the ORM knows; add new areas' schemas here. */
export const entities = [
  WorkspaceSchema,
  UserSchema,
  MembershipSchema,
  InvitationSchema,
  ApiKeySchema,
  SessionSchema,
  AuditLogSchema,
  IdempotencyRecordSchema,
  WorkflowSchema,
  WorkflowVersionSchema,
  RunSchema,
  RunStepSchema,
  RunLogSchema,
  ResumeTokenSchema,
  WebhookSchema,
  WebhookOutboxSchema,
  SmokeTestSchema,
  WorkerHeartbeatSchema,
  StoredFileSchema,
  FileScanSchema,
  CredentialSchema,
  WorkflowTargetSchema,
  TargetActivationSchema,
  TargetApprovalSchema,
  TargetSourceSchema,
  UserDatabaseSchema,
  UserTableSchema,
  ManagedTableSchema,
  ConfigurationReceiptSchema,
  ConfigurationBaselineSchema,
  ConfigurationProposalSchema,
  WorkflowMcpServerSchema,
  WorkspaceRepositorySchema,
  WorkflowReviewSchema,
  KnowledgeBaseSchema,
  KnowledgeDocumentSchema,
  KnowledgeConnectorSchema,
  KnowledgeSyncRunSchema,
  SkillSchema,
  LocalAiCliSessionSchema,
  ResearchRunSchema,
  ResearchSourceSchema,
  OrganizationSchema,
  OrganizationWorkspaceSchema,
  MailerRouteSchema,
  MailerThreadSchema,
  MailerMessageSchema,
  MailerReplyReservationSchema,
  MailerPollingGroupSchema,
  MailerGoogleDwdConfigSchema,
];

export * from './auth';
export * from './audit';
export * from './idempotency';
export * from './workspaces';
export * from './workflows';
export * from './runs';
export * from './webhooks';
export * from './smokeTests';
export * from './workerHeartbeats';
export * from './files';
export * from './credentials';
export * from './destinations';
export * from './databases';
export * from './workflowMcp';
export * from './repository';
export * from './knowledge';
export * from './skills';
export * from './localAiCli';
export * from './research';
export * from './commands';
export * from './organizations';
export * from './mailer';
