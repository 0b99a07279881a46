/**
 * The service factories: each area's dependencies built once per process from the
 * configuration and the infrastructure (the ORM, blob storage, the Temporal adapters that
 * implement services/kernel/ports.ts). The API's routes read `createServices`' object from
 * `AppDeps.services`; the worker's activities factory receives `createWorkerServices`'.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ActivityDeps } from '../activities';
import type { AppServices } from '../api/deps';
import type { BlobStore } from '../services/kernel/blobs';
import type { AppConfig } from '../services/kernel/config';
import { keySettingsOf, providerUrlsOf, type CredentialDeps } from '../services/credentials';
import type { FileScanner } from '../services/files';
import type { RunLauncher, ScheduleSync, WorkerProbe } from '../services/kernel/ports';

/** What the API's services are built on (main/wiring.ts builds it). */
export interface ApiInfra {
  orm: MikroORM;
  blobs: BlobStore;
  temporal: { namespace: string };
  runLauncher: RunLauncher;
  scheduler: ScheduleSync;
  workerProbe: WorkerProbe;
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
  const credentials = credentialBase(config);
  const { keys } = credentials;
  const allowPrivateNetworks = config.outboundAllowPrivateNetworks;
  const repository = { root: config.workflowRepositoryRoot, credentialKeys: keys, allowPrivateNetworks };
  return {
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
    deploy: { scheduler: infra.scheduler, secretKey: config.secretKey, repository },
    extflow: {
      orm: infra.orm,
      workerProbe: infra.workerProbe,
      config,
      temporal: infra.temporal,
      runLauncher: infra.runLauncher,
      importDir: config.extflowImportDir,
      credentials,
    },
    localAiCli: { config: config.localAiCli, keys },
    mailReplies: { keys, blobs: infra.blobs, allowPrivateNetworks, mailer: config.mailer },
    errtracker: { enabled: config.errtrackerIngressEnabled, secretKey: config.secretKey, credentialKeys: keys },
  };
}

/**
 * The worker's services, once per process: what `createActivities` receives (the Temporal
 * adapters that activities build on their own client are added by main/worker.ts).
 */
export function createWorkerServices(
  config: AppConfig,
  infra: WorkerInfra,
): Omit<ActivityDeps, 'commandEngineFor' | 'researchLauncherFor'> {
  return {
    orm: infra.orm,
    allowPrivateNetworks: config.outboundAllowPrivateNetworks,
    blobs: infra.blobs,
    credentials: keySettingsOf(config),
    knowledge: { config: config.knowledge, secretKey: config.secretKey },
    llm: config.llm,
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
