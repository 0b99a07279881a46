export {
  COMMAND_MESSAGES,
  findJob,
  findSchedule,
  findThread,
  insertJob,
  insertMessage,
  insertThread,
  isActive,
  loadJob,
  moveJob,
  type NewJob,
  nextQueuedJob,
  sql,
  updateJob,
} from './store';
export {
  COMMAND_JOB_RESTRICTED_FIELDS,
  type CommandJobView,
  type CommandProgress,
  type CommandProgressEvent,
  jobView,
  projectJob,
  scheduleView,
  threadView,
} from './views';
export {
  cancelJob,
  completeArtifact,
  createJob,
  type CreateJobInput,
  createThread,
  getJob,
  listJobs,
  listThreads,
  registerArtifact,
  retryJob,
  settleExpiry,
} from './jobs';
export { CommandConfirmError, CONFIRM_MESSAGES, type ConfirmErrorCode, confirmJob } from './confirm';
export { createSchedule, type CreateScheduleInput, fireSchedule, listSchedules, nextRunOf } from './schedules';
export {
  type AgentDeps,
  blockJob,
  cancelJobRow,
  failJob,
  finishJob,
  planJob,
  type PlannedJob,
  prepareRunAction,
  recordRunAction,
  resumeJob,
  runAction,
  startJob,
} from './agent';
export { COMMAND_TOOLS, offeredTools, type CommandPluggableTools, type CommandToolDeps } from './tools';
export {
  COMMAND_MESSAGE_RESTRICTED_FIELDS,
  type CommandMessageView,
  findMessageFallback,
  listMessages,
  messageView,
  projectMessage,
} from './messages';
