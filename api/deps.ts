import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client, Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../services/kernel/config';
import type { SignInLimiter } from '../services/kernel/signInLimits';
import type { ApiKeyPolicy } from '../services/accounts/apiKeys';
import type {
  CommandJobEngine,
  CommandScheduleSync,
  ResearchLauncher,
  RunLauncher,
  ScheduleSync,
  WorkerProbe,
} from '../services/kernel/ports';
import type { Metrics } from '../services/platform/metrics';
import type { PayloadEncryptionCodec } from '../services/kernel/payloadCodec';
import type { FilesRuntime } from '../services/files';
import type { KnowledgeRuntime } from '../services/knowledge';
import type { WebhookIntake } from '../services/webhooks';
import type { AdmitRun } from '../services/kernel/runAdmission';
import type { CredentialDeps, CredentialKeySettings, CredentialTestDeps } from '../services/credentials';
import type { RepositoryDeps } from '../services/repository';
import type { DeployDeps } from '../services/publishing';
import type { ExtflowDeps } from '../services/publishing/extflowImport';
import type { LocalAiCliDeps } from '../services/workers/localAiCli';
import type { ReplyDeps } from '../services/mailer';
import type { ErrtrackerIngressSettings } from '../services/webhooks';

/**
 * What the areas' use cases need besides an EntityManager, built once per process from the
 * configuration and the infrastructure (main/services.ts, `createServices`). Routes read these
 * instead of assembling dependencies on every request.
 */
export interface AppServices {
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
  /** Deploys and destination changes: schedules, webhook tokens, the repository review rule. */
  deploy: DeployDeps;
  /** Extflow import, smoke tests and credential bootstrap. */
  extflow: ExtflowDeps;
  /** Local AI CLI sessions. */
  localAiCli: LocalAiCliDeps;
  /** Mail replies: credentials, attachment blobs, the outbound guard and provider settings. */
  mailReplies: ReplyDeps;
  /** The error-tracker ingress endpoint. */
  errtracker: ErrtrackerIngressSettings;
}

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
  /** Holds new live runs while their workspace has too many queued or running (services/kernel/runAdmission.ts). */
  admitRun: AdmitRun;
  /** Keeps Temporal Schedules in step with deployed schedule triggers. */
  scheduler: ScheduleSync;
  /** Asks Temporal about the task queue, the Schedules and a smoke workflow, for worker health. */
  workerProbe: WorkerProbe;
  metrics: Metrics;
  /** The deployment's Temporal payload codec (also served to operators at /api/temporal-codec); undefined when payloads are plaintext. */
  payloadCodec: PayloadEncryptionCodec | undefined;
  /** Blob storage, scanners and the purge workflow of the files area. */
  files: FilesRuntime;
  /** Knowledge bases: document blobs, indexing and sync workflows, query embeddings. */
  knowledge: KnowledgeRuntime;
  /** Starts and cancels research runs on Temporal. */
  research: { launcher: ResearchLauncher };
  /** Command jobs: thread FIFO owners and job executions, and command schedules' Temporal Schedules. */
  commands: { engine: CommandJobEngine; schedules: CommandScheduleSync };
  /** The webhook invoke route's token cache and group-commit outbox writer. */
  webhookIntake: WebhookIntake;
  /** The areas' dependencies, built once (main/services.ts). */
  services: AppServices;
  /** Flipped when shutdown starts, so /readyz tells load balancers to stop sending traffic. */
  lifecycle: { shuttingDown: boolean };
}
