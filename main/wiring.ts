/**
 * The API's composition root: the one function that turns configuration, a database and a
 * Temporal connection into the dependencies routes receive. `main/api.ts` and the test
 * harness both call it, so tests run the wiring production runs.
 */
import { payloadCodecFromConfig } from '../services/kernel/payloadCodec';
import { createRunAdmission } from '../services/kernel/runAdmission';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { AppDeps } from '../api/deps';
import type { AppConfig } from '../services/kernel/config';
import { startIdempotencyPurge } from '../services/kernel/idempotencyPurge';
import { createMetrics } from '../services/platform/metrics';
import { startOutboxDispatcher } from '../services/webhooks/outboxDispatcher';
import { startStuckRunGuard } from '../services/runs';
import { SignInLimiter } from '../services/kernel/signInLimits';
import { workflowIdsExist } from '../services/workflows';
import { createWebhookIntake } from '../services/webhooks';
import type { ConnectedTemporalClient } from '../temporal/client';
import { temporalRunLauncher } from '../temporal/runsClient';
import { scrapeTemporalSdkMetrics } from '../temporal/runtime';
import { temporalScheduleSync } from '../temporal/schedulesClient';
import { temporalWorkerProbe } from '../temporal/workerProbe';
import { temporalFilePurger } from '../temporal/filesClient';
import { syncMailPollSchedules, syncSourceSchedules } from '../temporal/sourcesClient';
import { createBlobStore } from '../services/kernel/blobs';
import { fileScannersOf, type FilesRuntime } from '../services/files';
import type { KnowledgeRuntime } from '../services/knowledge';
import { temporalCommandEngine, temporalCommandScheduleSync } from '../temporal/commandsClient';
import { temporalKnowledgeIndexer, temporalKnowledgeSyncLauncher, temporalQueryEmbedder } from '../temporal/knowledgeClient';
import { temporalResearchLauncher } from '../temporal/researchClient';
import { createServices } from './services';

export function buildAppDeps(opts: {
  config: AppConfig;
  orm: MikroORM;
  temporal: ConnectedTemporalClient;
  namespace: string;
  logger: Logger;
}): AppDeps {
  const { config, orm, temporal, logger } = opts;
  const files = buildFilesRuntime(config, temporal);
  // The Temporal adapters of services/kernel/ports.ts, one each per process.
  const runLauncher = temporalRunLauncher(temporal.client);
  const scheduler = temporalScheduleSync(temporal.client);
  const workerProbe = temporalWorkerProbe(temporal.client, opts.namespace);
  const temporalWithNamespace = { ...temporal, namespace: opts.namespace };
  return {
    config,
    orm,
    temporal: temporalWithNamespace,
    logger,
    signInLimiter: new SignInLimiter(orm, config.signInLimits),
    apiKeyPolicy: { endUsersEnabled: config.endUsersEnabled, workflowIdsExist },
    runLauncher,
    admitRun: createRunAdmission(orm, config.runAdmission),
    scheduler,
    workerProbe,
    metrics: createMetrics(orm, [scrapeTemporalSdkMetrics]),
    payloadCodec: payloadCodecFromConfig(config),
    lifecycle: { shuttingDown: false },
    webhookIntake: createWebhookIntake(orm, config.webhookTokenCacheMs),
    files,
    knowledge: buildKnowledgeRuntime(config, temporal, files),
    research: { launcher: temporalResearchLauncher(temporal.client) },
    commands: { engine: temporalCommandEngine(temporal.client), schedules: temporalCommandScheduleSync(temporal.client) },
    services: createServices(config, { orm, blobs: files.blobs, temporal: temporalWithNamespace, runLauncher, scheduler, workerProbe }),
  };
}

function buildKnowledgeRuntime(config: AppConfig, temporal: ConnectedTemporalClient, files: FilesRuntime): KnowledgeRuntime {
  return {
    config: config.knowledge,
    blobs: files.blobs,
    indexer: temporalKnowledgeIndexer(temporal.client),
    queryEmbedder: temporalQueryEmbedder(temporal.client, config.knowledge),
    syncLauncher: temporalKnowledgeSyncLauncher(temporal.client),
  };
}

function buildFilesRuntime(config: AppConfig, temporal: ConnectedTemporalClient): FilesRuntime {
  const { writesDisabled, purgeDelayMs } = config.files;
  return {
    blobs: createBlobStore(config.blobs, config.secretKey),
    scanners: fileScannersOf(config),
    purger: temporalFilePurger(temporal.client),
    writesDisabled,
    purgeDelayMs,
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
    launcher: deps.runLauncher,
    pollMs: opts.pollMs,
    maxQueuedRuns: deps.config.outboxMaxQueuedRuns,
    startParallelism: deps.config.outboxStartParallelism,
    logger: deps.logger,
    wakeOn: deps.webhookIntake.outbox,
  });
  const guard = startStuckRunGuard({
    orm: deps.orm,
    launcher: deps.runLauncher,
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
