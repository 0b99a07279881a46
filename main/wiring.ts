/**
 * The API's composition root: the one function that turns configuration, a database and a
 * Temporal connection into the dependencies routes receive. `main/api.ts` and the test
 * harness both call it, so tests run the wiring production runs.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { AppDeps } from '../api/deps';
import type { AppConfig } from '../services/kernel/config';
import { startIdempotencyPurge } from '../services/kernel/idempotencyPurge';
import { createMetrics } from '../services/platform/metrics';
import { startOutboxDispatcher } from '../services/webhooks/outboxDispatcher';
import { startStuckRunGuard } from '../services/runs';
import type { ConnectedTemporalClient } from '../temporal/client';
import { scrapeTemporalSdkMetrics } from '../temporal/runtime';
import { syncMailPollSchedules, syncSourceSchedules } from '../temporal/sourcesClient';
import { createServices } from './services';

export function buildAppDeps(opts: {
  config: AppConfig;
  orm: MikroORM;
  temporal: ConnectedTemporalClient;
  namespace: string;
  logger: Logger;
}): AppDeps {
  const { config, orm, logger } = opts;
  const temporal = { ...opts.temporal, namespace: opts.namespace };
  const services = createServices(config, { orm, temporal, logger });
  const outbox = services.webhooks.intake.outbox;
  return {
    config,
    orm,
    temporal,
    logger,
    metrics: createMetrics(orm, [scrapeTemporalSdkMetrics], { webhook_outbox: () => outbox.stats() }),
    lifecycle: { shuttingDown: false },
    services,
  };
}

/** How often the API looks for runs whose workflow task keeps failing (services/runs/stuckRuns.ts). */
const STUCK_RUN_GUARD_INTERVAL_MS = 30_000;

/** The API process's background work: the webhook outbox dispatcher, the stuck-run guard and the idempotency purge. */
export function startApiBackground(
  deps: AppDeps,
  /** `rssScheduleSync: false` (tests sharing one Temporal server across databases) leaves the `rss_`/`ci_` Schedules alone. */
  opts: { pollMs: number; stuckRunIntervalMs?: number; rssScheduleSync?: boolean },
): { stop(): Promise<void> } {
  const dispatcher = startOutboxDispatcher({
    orm: deps.orm,
    launcher: deps.services.runs.launcher,
    pollMs: opts.pollMs,
    maxQueuedRuns: deps.config.outboxMaxQueuedRuns,
    startParallelism: deps.config.outboxStartParallelism,
    logger: deps.logger,
    wakeOn: deps.services.webhooks.intake.outbox,
  });
  const guard = startStuckRunGuard({
    orm: deps.orm,
    launcher: deps.services.runs.launcher,
    intervalMs: opts.stuckRunIntervalMs ?? STUCK_RUN_GUARD_INTERVAL_MS,
    logger: deps.logger,
  });
  const purge = startIdempotencyPurge({ orm: deps.orm, logger: deps.logger });
  const sources =
    opts.rssScheduleSync === false ? { stop: async () => undefined } : startRssScheduleSync(deps, RSS_SCHEDULE_SYNC_INTERVAL_MS);
  return { stop: async () => void (await Promise.all([dispatcher.stop(), guard.stop(), purge.stop(), sources.stop()])) };
}

/** How often the API reconciles RSS and CI sources and mail polling groups with their Temporal Schedules (temporal/sourcesClient.ts). */
const RSS_SCHEDULE_SYNC_INTERVAL_MS = 30_000;

/** Runs `syncSourceSchedules` now and every `intervalMs`; failures are logged and retried next time. */
function startRssScheduleSync(deps: AppDeps, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = Promise.all([
      syncSourceSchedules(deps.temporal.client, deps.orm.em.fork()),
      syncMailPollSchedules(deps.temporal.client, deps.orm.em.fork()),
    ]).catch((err: unknown) => deps.logger.warn({ err }, 'event-source schedule sync failed; retrying'));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
