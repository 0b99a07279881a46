/**
 * The destinations area (the API's "targets"): Production and named previews of a workflow
 * with candidate and active pointers and revisions (model.ts), source settings (sources.ts;
 * the changes of `POST /workflows/{id}/targets` are a use case: publishing/destinationChanges.ts), publication checks and the
 * read-only preview (publication.ts, preview.ts), session approvals (approvals.ts), running a
 * destination (runtime.ts), the legacy deploy on top of it (production.ts) and schedules per
 * destination (schedules.ts). Credential ids are checked through credentials.ts only.
 */
export {
  ACTIVATION_NOT_FOUND,
  type CiJobStatusView,
  type CiSourceView,
  connectionSelected,
  DESTINATION_NOT_FOUND,
  ensureProductionTarget,
  type ErrtrackerEndpointView,
  exec,
  HISTORY_LIMIT,
  type HistoryEntry,
  isLive,
  listTargets,
  loadScopedWorkflow,
  lockedTarget,
  PRODUCTION_NAME,
  productionHistory,
  revisionConflict,
  type RssSourceView,
  type SourceOverlapView,
  targetsOf,
  targetView,
  type TargetView,
  targetViews,
  touch,
  VERSION_NOT_FOUND,
  versionOf,
  withLockedWorkflow,
  WORKFLOW_NOT_FOUND,
} from './model';
export { type ApprovalView, approvePublication } from './approvals';
export { previewPublication, type PublicationPreview } from './preview';
export {
  assessPublication,
  CHECK_NAMES,
  type CheckName,
  type ConnectionReport,
  type DependencyReport,
  type PublicationAssessment,
  type PublicationCheck,
  type PublicationMode,
  type PublishFields,
} from './publication';
export {
  executionTargetOf,
  findTargetOf,
  liveTargetVersion,
  type LiveTargetVersion,
  type RunnableTargetVersion,
  runnableVersionForTrigger,
} from './runtime';
export { CI_INTERVAL, CI_MAX_JOBS, configureSource, requireEventSourceTrigger, RSS_INTERVAL, type SourceInput } from './sources';
export { credentialBelongsToWorkspace } from './credentials';
