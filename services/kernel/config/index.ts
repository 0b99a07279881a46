/**
 * Every setting the service reads from the environment. Each area of the service owns one module
 * of this folder: a zod schema of its variables (with default, `.describe()` text and secret
 * flag) and the function that builds its slice of `AppConfig`; this file composes them.
 * docs/configuration.md and .env.example are rendered from the same schemas, one heading per
 * area (`npm run docs:config`; a unit test fails when they are stale).
 */
import { z } from 'zod';
import { parseEnv, type ConfigArea } from './define';
import { httpArea, httpConfig, type HttpConfig } from './http';
import { metricsArea, metricsConfig, type MetricsConfig } from './metrics';
import { processesArea, processesConfig, type ProcessesConfig } from './processes';
import { databaseArea, databaseConfig, type DatabaseConfig } from './database';
import { temporalArea, temporalConfig, type TemporalConfig } from './temporalCluster';
import { secretsArea, secretsConfig, type SecretsConfig } from './secrets';
import { operatorsArea, operatorsConfig, type OperatorsConfig } from './operators';
import { authArea, authConfig, type AuthConfig } from './auth';
import { outboundArea, outboundConfig, type OutboundConfig } from './outbound';
import { runsArea, runsConfig, type RunsConfig } from './runs';
import { webhooksArea, webhooksConfig, type WebhooksConfig } from './webhooks';
import { workflowSourcesArea, workflowSourcesConfig, type WorkflowSourcesConfig } from './workflowSources';
import { filesArea, filesConfig, type FilesConfig } from './files';
import { credentialsArea, credentialsConfig, type CredentialsConfig } from './credentials';
import { databasesArea, databasesConfig, type DatabasesConfig } from './databases';
import { modelsArea, modelsConfig, type ModelsConfig } from './models';
import { commandsArea, commandsConfig, type CommandsConfig } from './commands';
import { knowledgeArea, knowledgeConfig, type KnowledgeConfig } from './knowledge';
import { localAiCliArea, localAiCliConfig, type LocalAiCliConfig } from './localAiCli';
import { mailerArea, mailerConfig, type MailerConfig } from './mailer';
import { researchArea, researchConfig, type ResearchConfig, type WebSearchConfig } from './research';
import { sandboxArea, sandboxConfig } from './sandbox';
import type { SandboxHostSettings } from '../sandbox/sandboxHost/client';

export { DEFAULT_API_HEAP_MB, DEFAULT_WORKER_HEAP_MB, type ProcessSettings } from './processes';
export { DEFAULT_MAX_CACHED_WORKFLOWS } from './temporalCluster';
export { DEFAULT_RUN_ADMISSION_MAX_ACTIVE } from './runs';
export { DEFAULT_OUTBOX_MAX_QUEUED_RUNS, DEFAULT_OUTBOX_START_PARALLELISM } from './webhooks';
export { requireSecretKey } from './secrets';
export { SANDBOX_KILL_GRACE_MS, sandboxSettings } from './sandbox';
export type { BlobConfig } from './files';
export type { CredentialSettings } from './credentials';
export type { LlmConfig, PriceTable } from './models';
export type { ConfigArea } from './define';
export type { KnowledgeConfig, LocalAiCliConfig, MailerConfig, WebSearchConfig };
export type { WebSearchProviderName } from './research';

/** The areas, in the order docs/configuration.md and .env.example list them. */
export const CONFIG_AREAS: readonly ConfigArea[] = [
  httpArea,
  metricsArea,
  processesArea,
  databaseArea,
  temporalArea,
  secretsArea,
  operatorsArea,
  authArea,
  outboundArea,
  runsArea,
  webhooksArea,
  workflowSourcesArea,
  filesArea,
  credentialsArea,
  databasesArea,
  modelsArea,
  commandsArea,
  knowledgeArea,
  researchArea,
  localAiCliArea,
  mailerArea,
  sandboxArea,
];

/** Every variable of every area: one parse reports all the bad ones at once. */
export const envSchema = z.object({
  ...httpArea.schema.shape,
  ...metricsArea.schema.shape,
  ...processesArea.schema.shape,
  ...databaseArea.schema.shape,
  ...temporalArea.schema.shape,
  ...secretsArea.schema.shape,
  ...operatorsArea.schema.shape,
  ...authArea.schema.shape,
  ...outboundArea.schema.shape,
  ...runsArea.schema.shape,
  ...webhooksArea.schema.shape,
  ...workflowSourcesArea.schema.shape,
  ...filesArea.schema.shape,
  ...credentialsArea.schema.shape,
  ...databasesArea.schema.shape,
  ...modelsArea.schema.shape,
  ...commandsArea.schema.shape,
  ...knowledgeArea.schema.shape,
  ...researchArea.schema.shape,
  ...localAiCliArea.schema.shape,
  ...mailerArea.schema.shape,
  ...sandboxArea.schema.shape,
});

// A variable declared by two areas would be silently merged above; refuse it at load.
const declared = CONFIG_AREAS.flatMap((area) => Object.keys(area.schema.shape));
if (declared.length !== Object.keys(envSchema.shape).length) {
  const twice = declared.filter((name, i) => declared.indexOf(name) !== i);
  throw new Error(`Configuration areas declare ${twice.join(', ')} more than once, or an area is missing from envSchema`);
}

export type AppConfig = HttpConfig &
  MetricsConfig &
  DatabaseConfig &
  TemporalConfig &
  OperatorsConfig &
  ProcessesConfig &
  AuthConfig &
  OutboundConfig &
  WorkflowSourcesConfig &
  SecretsConfig &
  WebhooksConfig &
  RunsConfig &
  FilesConfig &
  CredentialsConfig &
  DatabasesConfig & { knowledge: KnowledgeConfig } & ResearchConfig &
  ModelsConfig & { localAiCli: LocalAiCliConfig } & CommandsConfig & {
    mailer: MailerConfig;
  } /** SANDBOX_*: the sandbox host that runs tenants' code and dry runs (services/kernel/sandbox/sandboxHost/). */ & {
    sandbox: SandboxHostSettings;
  };

/** Reads the configuration once; throws a readable error naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const e = parseEnv(envSchema, env);
  // Checks across variables run in this order: sign-in limits, heartbeats, credentials, prices.
  const auth = authConfig(e);
  const processes = processesConfig(e);
  return {
    ...httpConfig(e),
    ...metricsConfig(e),
    ...databaseConfig(e),
    ...temporalConfig(e),
    ...operatorsConfig(e),
    ...processes,
    ...auth,
    ...outboundConfig(e),
    ...workflowSourcesConfig(e),
    ...secretsConfig(e),
    ...webhooksConfig(e),
    ...runsConfig(e),
    ...filesConfig(e),
    ...credentialsConfig(e),
    ...databasesConfig(e),
    ...modelsConfig(e),
    ...commandsConfig(e),
    ...knowledgeConfig(e),
    ...researchConfig(e),
    ...localAiCliConfig(e),
    ...mailerConfig(e),
    ...sandboxConfig(e),
  };
}
