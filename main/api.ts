/** The `api` process: its entry point (`node dist/main/api.js`, `npm run start:api`). */
import type { Logger } from 'pino';
import { createApp } from '../api/app';
import { listen } from '../api/server';
import { listenMetrics } from '../api/metrics';
import type { AppDeps } from '../api/deps';
import { openOrm } from '../db/orm';
import type { AppConfig } from '../services/kernel/config';
import { runStandalone } from '../services/kernel/lifecycle';
import { closeSandboxPool } from '../services/kernel/sandbox/sandbox';
import { closeUserSql } from '../services/databases';
import { connectTemporalClient } from '../temporal/client';
import { payloadCodecFromConfig } from '../services/kernel/payloadCodec';
import { registerSearchAttributes } from '../temporal/searchAttributes';
import { buildAppDeps, startApiBackground } from './wiring';

export interface StartedApi {
  url: string;
  /** The metrics port's URL when METRICS_PORT is set (api/metrics.ts). */
  metricsUrl: string | undefined;
  deps: AppDeps;
  /** Drains in-flight requests, then closes Temporal and database connections. */
  stop(): Promise<void>;
}

/** Starts the HTTP API against an existing database (migrated) and Temporal server. */
export async function startApi(opts: {
  config: AppConfig;
  databaseUrl: string;
  temporalAddress: string;
  logger: Logger;
}): Promise<StartedApi> {
  const { config, logger } = opts;
  const orm = await openOrm(opts.databaseUrl);
  const payloadCodec = payloadCodecFromConfig(config);
  if (!payloadCodec)
    logger.warn('Temporal payloads are stored unencrypted: set SECRET_KEY or TEMPORAL_PAYLOAD_KEY (the same as the worker processes)');
  const temporal = await connectTemporalClient({ address: opts.temporalAddress, namespace: config.temporal.namespace, payloadCodec });
  await registerSearchAttributes(temporal.connection, config.temporal.namespace);
  const deps = buildAppDeps({ config, orm, temporal, namespace: config.temporal.namespace, logger });
  const server = await listen(createApp(deps), { port: config.port, host: config.host, lifecycle: deps.lifecycle });
  const metricsServer = await listenMetrics(deps);
  const dispatcher = startApiBackground(deps, { pollMs: config.outboxPollMs });
  return {
    url: server.url,
    metricsUrl: metricsServer?.url,
    deps,
    stop: async () => {
      await server.close(config.shutdownTimeoutMs);
      await metricsServer?.close(1_000);
      await dispatcher.stop();
      await deps.services.auth.credentials.cache.close();
      await deps.services.auth.credentials.uses.flush();
      // Dry runs execute code nodes on the sandbox threads.
      await closeSandboxPool();
      await temporal.connection.close();
      await closeUserSql(orm.em);
      await orm.close();
    },
  };
}

if (require.main === module) runStandalone('api', startApi);
