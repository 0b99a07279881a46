import type { Logger } from 'pino';
import { createApp } from './app';
import { listen } from './server';
import type { AppDeps } from './deps';
import { openOrm } from '../db/orm';
import type { AppConfig } from '../services/config';
import { runStandalone } from '../services/lifecycle';
import { startOutboxDispatcher } from '../services/outboxDispatcher';
import { createMetrics } from '../services/metrics';
import { scrapeTemporalSdkMetrics } from '../temporal/runtime';
import { SignInLimiter } from '../services/sessions';
import { connectTemporalClient } from '../temporal/client';
import { temporalRunLauncher } from '../temporal/runs-client';
import { temporalScheduleSync } from '../temporal/schedules-client';
import { workflowIdsExist } from '../services/workflows';
import { registerSearchAttributes } from '../temporal/search-attributes';

export interface StartedApi {
  url: string;
  deps: AppDeps;
  /** Drains in-flight requests, then closes Temporal and database connections. */
  stop(): Promise<void>;
}

/** Starts the HTTP API against an existing database (migrated) and Temporal server. */
export async function startApi(opts: { config: AppConfig; databaseUrl: string; temporalAddress: string; logger: Logger }): Promise<StartedApi> {
  const { config, logger } = opts;
  const orm = await openOrm(opts.databaseUrl);
  const temporal = await connectTemporalClient({ address: opts.temporalAddress, namespace: config.temporal.namespace });
  await registerSearchAttributes(temporal.connection, config.temporal.namespace);
  const deps: AppDeps = {
    config,
    orm,
    temporal: { ...temporal, namespace: config.temporal.namespace },
    logger,
    signInLimiter: new SignInLimiter(),
    apiKeyPolicy: { endUsersEnabled: config.endUsersEnabled, workflowIdsExist },
    runLauncher: temporalRunLauncher(temporal.client),
    scheduler: temporalScheduleSync(temporal.client),
    metrics: createMetrics(orm, [scrapeTemporalSdkMetrics]),
    lifecycle: { shuttingDown: false },
  };
  const server = await listen(createApp(deps), { port: config.port, host: config.host, lifecycle: deps.lifecycle });
  const dispatcher = startOutboxDispatcher({ orm, launcher: deps.runLauncher, pollMs: config.outboxPollMs, logger });
  return {
    url: server.url,
    deps,
    stop: async () => {
      await server.close(config.shutdownTimeoutMs);
      await dispatcher.stop();
      await temporal.connection.close();
      await orm.close();
    },
  };
}

if (require.main === module) runStandalone('api', startApi);
