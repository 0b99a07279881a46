import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../services/config';
import type { SignInLimiter } from '../services/sessions';
import type { ApiKeyPolicy } from '../services/apiKeys';
import type { RunLauncher, ScheduleSync, WorkerProbe } from '../services/ports';
import type { Metrics } from '../services/metrics';

/** Everything the HTTP app needs, built once by the entry point and injected. */
export interface AppDeps {
  config: AppConfig;
  orm: MikroORM;
  temporal: { connection: Connection; client: Client; namespace: string };
  logger: Logger;
  signInLimiter: SignInLimiter;
  apiKeyPolicy: ApiKeyPolicy;
  /** Starts, cancels, approves and resumes runs on the durable engine. */
  runLauncher: RunLauncher;
  /** Keeps Temporal Schedules in step with deployed schedule triggers. */
  scheduler: ScheduleSync;
  /** Asks Temporal about the task queue, the Schedules and a smoke workflow, for worker health. */
  workerProbe: WorkerProbe;
  metrics: Metrics;
  /** Flipped when shutdown starts, so /readyz tells load balancers to stop sending traffic. */
  lifecycle: { shuttingDown: boolean };
}
