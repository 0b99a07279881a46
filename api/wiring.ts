/**
 * The API's composition root: the one function that turns configuration, a database and a
 * Temporal connection into the dependencies routes receive. `api/main.ts` and the test
 * harness both call it, so tests run the wiring production runs.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { AppDeps } from './deps';
import type { AppConfig } from '../services/config';
import { createMetrics } from '../services/metrics';
import { startOutboxDispatcher } from '../services/outboxDispatcher';
import { startStuckRunGuard } from '../services/runs';
import { SignInLimiter } from '../services/sessions';
import { workflowIdsExist } from '../services/workflows';
import type { ConnectedTemporalClient } from '../temporal/client';
import { temporalRunLauncher } from '../temporal/runs-client';
import { scrapeTemporalSdkMetrics } from '../temporal/runtime';
import { temporalScheduleSync } from '../temporal/schedules-client';
import { temporalWorkerProbe } from '../temporal/worker-probe';

export function buildAppDeps(opts: { config: AppConfig; orm: MikroORM; temporal: ConnectedTemporalClient; namespace: string; logger: Logger }): AppDeps {
  const { config, orm, temporal, logger } = opts;
  return {
    config,
    orm,
    temporal: { ...temporal, namespace: opts.namespace },
    logger,
    signInLimiter: new SignInLimiter(orm.em.getKnex()),
    apiKeyPolicy: { endUsersEnabled: config.endUsersEnabled, workflowIdsExist },
    runLauncher: temporalRunLauncher(temporal.client),
    scheduler: temporalScheduleSync(temporal.client),
    workerProbe: temporalWorkerProbe(temporal.client, opts.namespace),
    metrics: createMetrics(orm, [scrapeTemporalSdkMetrics]),
    lifecycle: { shuttingDown: false },
  };
}

/** How often the API looks for runs whose workflow task keeps failing (services/runs/stuckRuns.ts). */
const STUCK_RUN_GUARD_INTERVAL_MS = 30_000;

/** The API process's background work: the webhook outbox dispatcher and the stuck-run guard. */
export function startApiBackground(deps: AppDeps, opts: { pollMs: number; stuckRunIntervalMs?: number }): { stop(): Promise<void> } {
  const dispatcher = startOutboxDispatcher({ orm: deps.orm, launcher: deps.runLauncher, pollMs: opts.pollMs, logger: deps.logger });
  const guard = startStuckRunGuard({ orm: deps.orm, launcher: deps.runLauncher, intervalMs: opts.stuckRunIntervalMs ?? STUCK_RUN_GUARD_INTERVAL_MS, logger: deps.logger });
  return { stop: async () => void (await Promise.all([dispatcher.stop(), guard.stop()])) };
}
