// The workflow bundle's entry point: every workflow type the worker serves.
export { runWorkflow, scheduledRunWorkflow } from './runs';
export { smokeWorkflow } from './workers';
