/**
 * The service factories: each area's runtime and dependencies built once per process from the
 * configuration and the infrastructure (the ORM, the Temporal client whose adapters implement
 * services/kernel/ports.ts). The API's routes read `createServices`' object from
 * `AppDeps.services`; the worker's activities factory receives `createWorkerServices`'.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { ActivityDeps } from '../activities';
import type { AppServices } from '../api/deps';
import type { BlobStore } from '../services/kernel/blobs';
import { createBlobStore } from '../services/kernel/blobs';
import type { AppConfig } from '../services/kernel/config';
import type { Logger } from 'pino';
import { KeyUses, type KeyVerification } from '../services/accounts/auth';
import { CredentialCache } from '../services/accounts/credentialCache';
import { keySettingsOf, providerUrlsOf, type CredentialDeps } from '../services/credentials';
import { fileScannersOf, type FileScanner, type FilesRuntime } from '../services/files';
import type { KnowledgeRuntime } from '../services/knowledge';
import { createEmbeddingsClient } from '../services/models/embeddings';
import { payloadCodecFromConfig } from '../services/kernel/payloadCodec';
import { createRunAdmission } from '../services/kernel/runAdmission';
import { SignInLimiter } from '../services/kernel/signInLimits';
import { createWebhookIntake } from '../services/webhooks';
import { VersionGraphCache, workflowIdsExist } from '../services/workflows';
import { temporalCommandEngine, temporalCommandScheduleSync } from '../temporal/commandsClient';
import { temporalFilePurger } from '../temporal/filesClient';
import { temporalKnowledgeIndexer, temporalKnowledgeSyncLauncher, temporalQueryEmbedder } from '../temporal/knowledgeClient';
import { temporalResearchLauncher } from '../temporal/researchClient';
import { temporalRunLauncher } from '../temporal/runsClient';
import { temporalScheduleSync } from '../temporal/schedulesClient';
import { temporalWorkerProbe } from '../temporal/workerProbe';

/** What the API's services are built on (main/wiring.ts builds it). */
export interface ApiInfra {
  orm: MikroORM;
  /** The API's Temporal client: the adapters of services/kernel/ports.ts are built on it. */
  temporal: { client: Client; namespace: string };
  logger?: Logger;
}

/** What the worker's services are built on (main/worker.ts builds it). */
export interface WorkerInfra {
  orm: MikroORM;
  blobs: BlobStore;
  scanners: FileScanner[];
}

/** Credentials as every area reaches them: the keys, the environment allowlist, process.env. */
function credentialBase(config: AppConfig): Omit<CredentialDeps, 'providerUrls'> {
  return { keys: keySettingsOf(config), envAllowlist: config.credentials.envAllowlist, readEnv: (n) => process.env[n] };
}

/** The API's services, once per process. */
export function createServices(config: AppConfig, infra: ApiInfra): AppServices {
  const { orm } = infra;
  const { client, namespace } = infra.temporal;
  const credentials = credentialBase(config);
  const { keys } = credentials;
  const allowPrivateNetworks = config.outboundAllowPrivateNetworks;
  const repository = { root: config.workflowRepositoryRoot, credentialKeys: keys, allowPrivateNetworks };
  // The Temporal adapters of services/kernel/ports.ts, one each per process.
  const runLauncher = temporalRunLauncher(client, { loopContinueAfterEvents: config.loopContinueAfterEvents });
  const workerHealth = { orm, workerProbe: temporalWorkerProbe(client, namespace), config, temporal: { namespace } };
  const files = filesRuntime(config, client);
  return {
    auth: { signInLimiter: new SignInLimiter(orm, config.signInLimits), credentials: credentialVerification(config, infra) },
    apiKeys: { endUsersEnabled: config.endUsersEnabled, workflowIdsExist },
    runs: { launcher: runLauncher, admit: createRunAdmission(config.runAdmission), versions: new VersionGraphCache() },
    credentials: {
      keys,
      crud: { ...credentials, providerUrls: providerUrlsOf(config) },
      tests: {
        keys,
        allowPrivateNetworks,
        timeoutMs: config.credentials.testTimeoutMs,
        providerBaseUrls: config.credentials.providerBaseUrls,
      },
    },
    repository,
    publishing: { scheduler: temporalScheduleSync(client), secretKey: config.secretKey, repository },
    extflow: { ...workerHealth, runLauncher, importDir: config.extflowImportDir, credentials },
    workers: { health: workerHealth, localAiCli: { config: config.localAiCli, keys } },
    files,
    knowledge: knowledgeRuntime(config, client, files),
    research: { launcher: temporalResearchLauncher(client), webSearch: config.research.search !== null },
    commands: { engine: temporalCommandEngine(client), schedules: temporalCommandScheduleSync(client) },
    mailer: { replies: { keys, blobs: files.blobs, allowPrivateNetworks, mailer: config.mailer } },
    webhooks: {
      intake: createWebhookIntake(orm, config.webhookTokenCacheMs, {
        maxBatch: config.webhookIntakeMaxBatch,
        maxWaitMs: config.webhookIntakeMaxWaitMs,
      }),
      errtracker: { enabled: config.errtrackerIngressEnabled, secretKey: config.secretKey, credentialKeys: keys },
    },
    temporalCodec: { codec: payloadCodecFromConfig(config) },
  };
}

/** The credential cache follows this process's flushes and every process's commits (LISTEN on its own connection). */
function credentialVerification(config: AppConfig, infra: ApiInfra): KeyVerification {
  const { orm } = infra;
  const databaseUrl = orm.config.get('clientUrl');
  const cache = new CredentialCache({ ttlMs: config.authCacheTtlMs, databaseUrl, logger: infra.logger });
  cache.watch(orm.em.getEventManager());
  cache.ensureListening();
  return { cache, uses: new KeyUses(() => orm.em.fork()) };
}

function filesRuntime(config: AppConfig, client: Client): FilesRuntime {
  const { writesDisabled, purgeDelayMs } = config.files;
  return {
    blobs: createBlobStore(config.blobs, config.secretKey),
    scanners: fileScannersOf(config),
    purger: temporalFilePurger(client),
    writesDisabled,
    purgeDelayMs,
  };
}

function knowledgeRuntime(config: AppConfig, client: Client, files: FilesRuntime): KnowledgeRuntime {
  return {
    config: config.knowledge,
    blobs: files.blobs,
    indexer: temporalKnowledgeIndexer(client),
    queryEmbedder: temporalQueryEmbedder(client, config.knowledge),
    syncLauncher: temporalKnowledgeSyncLauncher(client),
  };
}

/**
 * What the worker's activities receive from `createWorkerServices`; main/worker.ts adds the
 * Temporal adapters, which activities build on their own activity's client.
 */
export type WorkerServices = Omit<ActivityDeps, 'commandEngineFor' | 'researchLauncherFor'>;

/** The worker's services, once per process: what `createActivities` receives. */
export function createWorkerServices(config: AppConfig, infra: WorkerInfra): WorkerServices {
  const allowPrivateNetworks = config.outboundAllowPrivateNetworks;
  return {
    orm: infra.orm,
    allowPrivateNetworks,
    blobs: infra.blobs,
    credentials: keySettingsOf(config),
    knowledge: {
      config: config.knowledge,
      secretKey: config.secretKey,
      embedder: createEmbeddingsClient(config.knowledge.embeddings, { allowPrivateNetworks }),
    },
    llm: config.llm,
    webSearch: config.research.search,
    localAiCli: config.localAiCli,
    commands: {
      llm: config.llm,
      confirmationTtlSeconds: config.commands.confirmationTtlSeconds,
      databaseQuery: config.databaseQuery,
      localAiCli: config.localAiCli,
    },
    mailer: { config: config.mailer, scanners: infra.scanners },
  };
}
