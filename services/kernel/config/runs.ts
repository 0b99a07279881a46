import { z } from 'zod';
import type { RunAdmissionSettings } from '../runAdmission';
import { defineArea } from './define';

/** Live runs a workspace may have queued or running before new starts wait (services/kernel/runAdmission.ts). */
export const DEFAULT_RUN_ADMISSION_MAX_ACTIVE = 50;

/** Starting runs and answering their approvals (services/runs/). */
export const runsArea = defineArea('runs', 'Runs', {
  RUN_ADMISSION_MAX_ACTIVE: z.coerce
    .number()
    .int()
    .min(0)
    .max(100_000)
    .default(DEFAULT_RUN_ADMISSION_MAX_ACTIVE)
    .describe(
      'Live runs a workspace may have `queued` or `running` before new starts (`execute`, `rerun`, end-user runs) wait at the door; `0` turns admission off (docs/decisions.md, "Run admission").',
    ),
  RUN_ADMISSION_MAX_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(30_000)
    .describe('How long such a start waits for a place before it is refused 503 with `Retry-After: 1` (no run is recorded).'),
  RUN_ADMISSION_RECHECK_MS: z.coerce
    .number()
    .int()
    .min(5)
    .max(10_000)
    .default(50)
    .describe("How often a waiting workspace's count of active runs is read again."),
  APPROVAL_ANSWER_WAIT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(120_000)
    .default(10_000)
    .describe('How long `POST /api/runs/{id}/approval` waits for a worker to decide before it queues the decision (202 `queued: true`).'),
  RUN_LOOP_CONTINUE_AFTER_EVENTS: z.coerce
    .number()
    .int()
    .min(10)
    .max(50_000)
    .default(10_000)
    .describe(
      'History events after which a run\'s loop continues the run in a new Temporal execution (continue-as-new; same run), unless Temporal suggests it sooner (docs/workflow-graph.md, "Loops").',
    ),
});

export type RunsEnv = z.output<typeof runsArea.schema>;

export interface RunsConfig {
  /** RUN_ADMISSION_*: new live runs wait while their workspace has this many queued or running (services/kernel/runAdmission.ts). */
  runAdmission: RunAdmissionSettings;
  /** APPROVAL_ANSWER_WAIT_MS: how long an approval waits for a worker to decide it before it is queued (202). */
  approvalAnswerWaitMs: number;
  /** RUN_LOOP_CONTINUE_AFTER_EVENTS: history length at which a loop continues its run as new. */
  loopContinueAfterEvents: number;
}

export function runsConfig(e: RunsEnv): RunsConfig {
  return {
    runAdmission: {
      maxActivePerWorkspace: e.RUN_ADMISSION_MAX_ACTIVE,
      maxWaitMs: e.RUN_ADMISSION_MAX_WAIT_MS,
      recheckMs: e.RUN_ADMISSION_RECHECK_MS,
    },
    approvalAnswerWaitMs: e.APPROVAL_ANSWER_WAIT_MS,
    loopContinueAfterEvents: e.RUN_LOOP_CONTINUE_AFTER_EVENTS,
  };
}
