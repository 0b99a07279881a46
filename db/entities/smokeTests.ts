import { EntitySchema } from '@mikro-orm/core';

export type SmokeTestStatus = 'passed' | 'attention' | 'failed';

/** One worker smoke test of a workspace; the newest is the workspace's latest. */
export interface SmokeTest {
  id: string;
  workspaceId: string;
  status: SmokeTestStatus;
  message: string;
  durationMs: number;
  /** `{ temporal: { workflowId, taskQueue, mode }, targetWorkflowId, useQueue, waitForWorkerMs }` */
  details: Record<string, unknown>;
  createdAt: Date;
}

export const SmokeTestSchema = new EntitySchema<SmokeTest>({
  name: 'SmokeTest',
  tableName: 'smoke_tests',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    status: { type: 'string' },
    message: { type: 'text' },
    durationMs: { type: 'integer', fieldName: 'duration_ms' },
    details: { type: 'json' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
  },
});
