import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, workspaceScoped } from './columns';

export type SmokeTestStatus = 'passed' | 'attention' | 'failed';

export const SmokeTestSchema = entity('SmokeTest', 'smoke_tests', {
  ...workspaceScoped(),
  status: p.string().$type<SmokeTestStatus>(),
  message: p.text(),
  durationMs: p.integer(),
  /** `{ temporal: { workflowId, taskQueue, mode }, targetWorkflowId, useQueue, waitForWorkerMs }` */
  details: p.json<Record<string, unknown>>(),
  ...createdAt(),
});
/** One worker smoke test of a workspace; the newest is the workspace's latest. */
export type SmokeTest = InferEntity<typeof SmokeTestSchema>;
