import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamptz } from './columns';

export type SmokeTestStatus = 'passed' | 'attention' | 'failed';

export const SmokeTestSchema = entity({
  name: 'SmokeTest',
  tableName: 'smoke_tests',
  properties: {
    id: p.string().primary(),
    workspaceId: p.string(),
    status: p.string().$type<SmokeTestStatus>(),
    message: p.text(),
    durationMs: p.integer(),
    /** `{ temporal: { workflowId, taskQueue, mode }, targetWorkflowId, useQueue, waitForWorkerMs }` */
    details: p.json<Record<string, unknown>>(),
    createdAt: timestamptz('created_at'),
  },
});
/** One worker smoke test of a workspace; the newest is the workspace's latest. */
export type SmokeTest = InferEntity<typeof SmokeTestSchema>;
