/**
 * Names shared by workflows, workers and clients. Workflow code imports this module, so it
 * must stay free of Node built-ins and I/O.
 */
export const TASK_QUEUE = 'workflow-runs';

/** Custom search attributes registered at start, so operators can filter runs in the Web UI. */
export const SEARCH_ATTRIBUTES = {
  WorkspaceId: 'WorkspaceId',
  SvcWorkflowId: 'SvcWorkflowId',
  SvcTrigger: 'SvcTrigger',
} as const;

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;

/** Workflow type names, used when starting by name from the API. */
export const WORKFLOW_TYPES = {
  smoke: 'smokeWorkflow',
} as const;
