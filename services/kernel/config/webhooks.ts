import { z } from 'zod';
import { defineArea, envBool } from './define';

/**
 * Runs the outbox dispatcher started that are still `queued` above which it stops handing
 * over: the backlog then waits in the outbox (durable, cheap) instead of in Temporal's task queue.
 */
export const DEFAULT_OUTBOX_MAX_QUEUED_RUNS = 200;

/** Run starts one outbox dispatch pass keeps in flight at once. */
export const DEFAULT_OUTBOX_START_PARALLELISM = 32;

/** Webhook triggers, their outbox and its dispatcher (services/webhooks/, services/webhooks/outboxDispatcher.ts). */
export const webhooksArea = defineArea('webhooks', 'Webhooks and the outbox', {
  WEBHOOK_SYNC_BUDGET_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(300_000)
    .default(30_000)
    .describe('How long a webhook caller waits for a Response node before 202 `processing`.'),
  WEBHOOK_TOKEN_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(1_000)
    .describe(
      'How long the invoke route reuses a resolved webhook token (0: off); changes made through the same API process apply at once.',
    ),
  WEBHOOK_INTAKE_MAX_BATCH: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(500)
    .describe('Webhook requests written to the outbox with one INSERT and one commit at most (group commit; 1–1000).'),
  WEBHOOK_INTAKE_MAX_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(50)
    .default(2)
    .describe(
      'How long webhook requests gather into one outbox INSERT while another is being written (0–50 ms); a request that finds none on the wire is written at once.',
    ),
  OUTBOX_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000).describe('Webhook outbox dispatcher poll interval.'),
  OUTBOX_MAX_QUEUED_RUNS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_OUTBOX_MAX_QUEUED_RUNS)
    .describe(
      "Backpressure of the outbox dispatcher: while more runs it started are still `queued` (the workers are behind) it hands nothing over, and the backlog waits in the outbox instead of Temporal's task queue (1–100000).",
    ),
  // A pass hands over at most a batch of 100 entries, so more starts in flight would never be used.
  OUTBOX_START_PARALLELISM: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(DEFAULT_OUTBOX_START_PARALLELISM)
    .describe('Run starts one outbox dispatch pass keeps in flight at once (1–100; a pass takes at most 100 entries).'),
  ERRTRACKER_INGRESS_ENABLED: envBool(false).describe('Feature switch of `/api/integrations/errtracker/{token}`.'),
});

export type WebhooksEnv = z.output<typeof webhooksArea.schema>;

export interface WebhooksConfig {
  webhookSyncBudgetMs: number;
  /** How long a resolved webhook token is reused by the invoke route (0: never); changes made through this process clear it at once. */
  webhookTokenCacheMs: number;
  /** WEBHOOK_INTAKE_MAX_BATCH: rows of one group-commit INSERT of the outbox at most. */
  webhookIntakeMaxBatch: number;
  /** WEBHOOK_INTAKE_MAX_WAIT_MS: how long rows gather while another outbox INSERT is on the wire. */
  webhookIntakeMaxWaitMs: number;
  outboxPollMs: number;
  /** OUTBOX_MAX_QUEUED_RUNS: the dispatcher's backpressure cap (services/webhooks/outboxDispatcher.ts). */
  outboxMaxQueuedRuns: number;
  /** OUTBOX_START_PARALLELISM: run starts in flight per dispatch pass (`dispatchOutbox`). */
  outboxStartParallelism: number;
  errtrackerIngressEnabled: boolean;
}

export function webhooksConfig(e: WebhooksEnv): WebhooksConfig {
  return {
    webhookSyncBudgetMs: e.WEBHOOK_SYNC_BUDGET_MS,
    webhookTokenCacheMs: e.WEBHOOK_TOKEN_CACHE_MS,
    webhookIntakeMaxBatch: e.WEBHOOK_INTAKE_MAX_BATCH,
    webhookIntakeMaxWaitMs: e.WEBHOOK_INTAKE_MAX_WAIT_MS,
    outboxPollMs: e.OUTBOX_POLL_MS,
    outboxMaxQueuedRuns: e.OUTBOX_MAX_QUEUED_RUNS,
    outboxStartParallelism: e.OUTBOX_START_PARALLELISM,
    errtrackerIngressEnabled: e.ERRTRACKER_INGRESS_ENABLED,
  };
}
