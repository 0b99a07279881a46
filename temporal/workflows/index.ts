// The workflow bundle's entry point: every workflow type the worker serves.
export { smokeWorkflow } from './smoke';
export { runWorkflow } from './run';
export { scheduledRunWorkflow } from './scheduled';
