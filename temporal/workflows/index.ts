// The workflow bundle's entry point: every workflow type the worker serves.
export { runWorkflow, scheduledRunWorkflow } from './runs';
export { smokeWorkflow } from './workers';
export { filePurgeWorkflow } from './files';
export { rssPollWorkflow, ciPollWorkflow } from './sources';
export { mailPollWorkflow } from './mailer';
export {
  knowledgeIndexDocumentWorkflow,
  knowledgeIndexRunWorkflow,
  knowledgeQueryEmbeddingWorkflow,
  knowledgeSyncWorkflow,
} from './knowledge';
export { researchWorkflow } from './research';
export { commandThreadWorkflow, commandJobWorkflow, commandScheduleFireWorkflow } from './commands';
