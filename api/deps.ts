import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../services/kernel/config';
import type { SignInLimiter } from '../services/kernel/signInLimits';
import type { ApiKeyPolicy } from '../services/accounts/apiKeys';
import type { KeyVerification } from '../services/accounts/auth';
import type { CommandJobEngine, CommandScheduleSync, ResearchLauncher, RunLauncher } from '../services/kernel/ports';
import type { Metrics } from '../services/platform/metrics';
import type { PayloadEncryptionCodec } from '../services/kernel/payloadCodec';
import type { FilesRuntime } from '../services/files';
import type { KnowledgeRuntime } from '../services/knowledge';
import type { WebhookIntake } from '../services/webhooks';
import type { AdmitRun } from '../services/kernel/runAdmission';
import type { VersionGraphCache } from '../services/workflows';
import type { CredentialDeps, CredentialKeySettings, CredentialTestDeps } from '../services/credentials';
import type { RepositoryDeps } from '../services/repository';
import type { DeployDeps } from '../services/publishing';
import type { ExtflowDeps } from '../services/publishing/extflowImport';
import type { LocalAiCliDeps } from '../services/workers/localAiCli';
import type { ReplyDeps } from '../services/mailer';
import type { ErrtrackerIngressSettings } from '../services/webhooks';
import type { WorkerHealthDeps } from '../services/workers/checks';

/**
 * Each area's runtime and dependencies, built once per process from the configuration and the
 * infrastructure (main/services.ts, `createServices`). A field is named after its area, as in
 * api/routes/<area>.ts and services/<area>/. Routes read `deps.services.<area>` instead of
 * assembling dependencies on every request.
 */
export interface AppServices {
  auth: {
    /** Sign-in throttling per account and per address. */
    signInLimiter: SignInLimiter;
    /** Verified keys and sessions kept in memory, key uses written in batches (services/accounts/credentialCache.ts). */
    credentials: KeyVerification;
  };
  /** What key creation checks: whether end-user keys are on, and that their workflows exist. */
  apiKeys: ApiKeyPolicy;
  runs: {
    /** Starts, cancels, approves and resumes runs on the durable engine. */
    launcher: RunLauncher;
    /** Holds new live runs while their workspace has too many queued or running (services/kernel/runAdmission.ts). */
    admit: AdmitRun;
    /** Graphs of stored versions, read once per process (they never change). */
    versions: VersionGraphCache;
  };
  credentials: {
    /** Keys that encrypt and decrypt workspace credentials (CREDENTIAL_KEY, SECRET_KEY, previous keys). */
    keys: CredentialKeySettings;
    /** CRUD and bootstrap: keys, the environment allowlist and the providers' base URLs. */
    crud: CredentialDeps;
    /** Credential tests: keys, the outbound guard and the test timeout. */
    tests: CredentialTestDeps;
  };
  /** The workspace repository (WORKFLOW_REPOSITORY_ROOT, remotes through the outbound guard). */
  repository: RepositoryDeps;
  /** Deploys, deletions and destination changes: schedules (Temporal Schedules of deployed triggers), webhook tokens, the repository review rule. */
  publishing: DeployDeps;
  /** Extflow import, smoke tests and credential bootstrap. */
  extflow: ExtflowDeps;
  workers: {
    /** The task queue, the Schedules and a smoke workflow as Temporal sees them, for worker health. */
    health: WorkerHealthDeps;
    /** Local AI CLI sessions. */
    localAiCli: LocalAiCliDeps;
  };
  /** Blob storage, scanners and the purge workflow of the files area. */
  files: FilesRuntime;
  /** Knowledge bases: document blobs, indexing and sync workflows, query embeddings. */
  knowledge: KnowledgeRuntime;
  /** Starts and cancels research runs on Temporal. */
  /** `webSearch`: a web search provider is configured (RESEARCH_SEARCH_PROVIDER), so runs may name no source URLs. */
  research: { launcher: ResearchLauncher; webSearch: boolean };
  /** Command jobs: thread FIFO owners and job executions, and command schedules' Temporal Schedules. */
  commands: { engine: CommandJobEngine; schedules: CommandScheduleSync };
  /** Mail replies: credentials, attachment blobs, the outbound guard and provider settings. */
  mailer: { replies: ReplyDeps };
  webhooks: {
    /** The webhook invoke route's token cache and group-commit outbox writer. */
    intake: WebhookIntake;
    /** The error-tracker ingress endpoint. */
    errtracker: ErrtrackerIngressSettings;
  };
  /** The deployment's Temporal payload codec, served to operators; undefined when payloads are plaintext. */
  temporalCodec: { codec: PayloadEncryptionCodec | undefined };
}

/**
 * Everything the HTTP app needs, built once by the entry point and injected: the process's
 * infrastructure, and the areas' services built on it.
 */
export interface AppDeps {
  config: AppConfig;
  orm: MikroORM;
  temporal: { connection: Connection; client: Client; namespace: string };
  logger: Logger;
  metrics: Metrics;
  /** Flipped when shutdown starts, so /readyz tells load balancers to stop sending traffic. */
  lifecycle: { shuttingDown: boolean };
  /** The areas' runtimes and dependencies, built once (main/services.ts). */
  services: AppServices;
}
