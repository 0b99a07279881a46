/**
 * The runs area: starting runs (execute, rerun, and the runs the engine starts itself), the
 * one run-row writer (the runnable rule it applies lives in the workflows base: runnable.ts),
 * dry runs, views and queries for the API, approvals, event resumes, the read model written
 * from Temporal by activities, end-user runs (endUsers.ts) and run logs (logs.ts).
 */
export { decideApproval, type ApprovalDecisionInput } from './approvals';
export { cancelRun } from './cancel';
export { executeWorkflow, rerunRun, type ExecuteInput, type ExecuteResult } from './execute';
export { activeFilter, matchingRunsSql, queryRuns, RUN_SORTS, type RunFilters, type RunSort } from './queries';
export { recordRunProgress, type RunProgress } from './readModel';
export { issueResumeToken, resumeEventWait } from './resumeTokens';
export { failStuckRuns, failStuckRunsOnce, NEVER_STARTED, startStuckRunGuard, STUCK_RUN_GUARD, type StuckRunOptions } from './stuckRuns';
export { writeRunRow, type NewRunRow } from './runRows';
export { ChildRunRefused, prepareChildRun, prepareScheduledRun } from './startedByEngine';
export { queryRunSummaries, type ProjectedRunSummary, type RunSummary } from './summaries';
export { workflowRunStatus, type WorkflowRunStatus } from './status';
export {
  capValue,
  fullRunValue,
  isTerminal,
  isTruncatedValue,
  loadRun,
  RUN_VALUE_CAP_BYTES,
  STEP_NOT_FOUND,
  type RunValueField,
  type TruncatedValue,
  loadRunViews,
  presentRuns,
  projectRun,
  RUN_NOT_FOUND,
  runView,
  type ProjectedRun,
  type RunView,
} from './views';
