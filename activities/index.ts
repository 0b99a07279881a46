import type { MikroORM } from '@mikro-orm/postgresql';
import type { CredentialKeySettings } from '../services/credentials';
import { createNodeActivities } from './nodes';
import { createRunActivities } from './runs';
import { createWorkerActivities } from './workers';
import { createFileActivities } from './files';
import type { BlobStore } from '../services/kernel/blobs';
import { createDatabaseActivities } from './databases';
import { createSourceActivities } from './sources';
import { createMailerActivities } from './mailer';
import type { KnowledgeConfig, MailerConfig } from '../services/kernel/config';
import type { FileScanner } from '../services/files';
import { createKnowledgeActivities } from './knowledge';
import { createResearchActivities } from './research';
import type { LlmConfig, LocalAiCliConfig, WebSearchConfig } from '../services/kernel/config';
import type { Client } from '@temporalio/client';
import type { CommandJobEngine, ResearchLauncher } from '../services/kernel/ports';
import type { EmbeddingsClient } from '../services/models/embeddings';
import { createCommandActivities, type CommandActivityConfig } from './commands';

/** What activities may use; built once per worker process (main/services.ts, `createWorkerServices`). */
export interface ActivityDeps {
  orm: MikroORM;
  /** Lets http nodes reach private, loopback and link-local addresses (tests, local development). */
  allowPrivateNetworks: boolean;
  /** Blob storage, for the file purge activity (the worker builds it from the same configuration as the API). */
  blobs?: BlobStore;
  /** Keys that decrypt workspace credentials (http nodes with `credentialId`); without them such nodes fail. */
  credentials?: CredentialKeySettings;
  /** Embeddings endpoint, provider base URLs and sync settings of the knowledge area (same configuration as the API). */
  knowledge?: {
    config: KnowledgeConfig;
    secretKey: string | undefined;
    /** The embeddings endpoint's client, built once per worker; null without EMBEDDINGS_BASE_URL. */
    embedder: EmbeddingsClient | null;
  };
  /** The deployment's chat model (research synthesis); without it a workspace `llm` credential is needed. */
  llm?: LlmConfig;
  /** The web search provider of research runs without source URLs (same configuration as the API); null or absent: none. */
  webSearch?: WebSearchConfig | null;
  /** Local AI CLIs, for research runs whose `aiProvider` is `cliA` or `cliB` (same configuration as the API). */
  localAiCli?: LocalAiCliConfig;
  /** Chat model, confirmation window and SQL limits of command jobs (same configuration as the API). */
  commands?: CommandActivityConfig;
  /** Builds the command thread engine on the activity's Temporal client (temporal/worker.ts injects it). */
  commandEngineFor?: (client: Client) => CommandJobEngine;
  /** Builds the research launcher on the activity's Temporal client (the agent's start_research tool). */
  researchLauncherFor?: (client: Client) => ResearchLauncher;
  /** Mail polling: provider base URLs and the scanners inbound attachments go through (the same as the API's files area). */
  mailer?: { config: MailerConfig; scanners: FileScanner[] };
  /** Time limit of one code node in ms (default SANDBOX_DEFAULTS.timeoutMs, 1 s); tests of outcomes raise it so a busy machine cannot fail a correct program. */
  codeTimeoutMs?: number;
}

/** Activity factory: workflows import its type only (`proxyActivities<ReturnType<typeof createActivities>>`). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWorkerActivities(deps),
    ...createRunActivities(deps),
    ...createNodeActivities(deps),
    ...createFileActivities(deps),
    ...createDatabaseActivities(deps),
    ...createSourceActivities(deps),
    ...createMailerActivities(deps),
    ...createKnowledgeActivities(deps),
    ...createResearchActivities(deps),
    ...createCommandActivities(deps),
  };
}
