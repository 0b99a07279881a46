import { z } from 'zod';
import { defineArea, list, SECRET } from './define';

/** Knowledge (services/knowledge/): the embeddings endpoint and the connector providers. */
export const knowledgeArea = defineArea('knowledge', 'Knowledge', {
  EMBEDDINGS_BASE_URL: z
    .string()
    .url()
    .optional()
    .describe(
      'OpenAI-compatible embeddings endpoint (e.g. `https://api.openai.com/v1`); unset: knowledge search is keyword only and says so.',
    ),
  EMBEDDINGS_MODEL: z
    .string()
    .min(1)
    .default('text-embedding-3-small')
    .describe('Embeddings model name; chunks embedded with another model are left out of vector search until re-indexed.'),
  EMBEDDINGS_API_KEY: z.string().optional().meta(SECRET).describe('Bearer key of the embeddings endpoint.'),
  EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000).describe('Timeout of one embeddings request.'),
  EMBEDDINGS_MAX_RETRIES: z.coerce
    .number()
    .int()
    .min(0)
    .max(10)
    .default(3)
    .describe('Retries of 408/409/429/5xx answers and connection errors (exponential backoff, honouring Retry-After).'),
  KNOWLEDGE_DRIVE_BASE_URL: z
    .string()
    .url()
    .default('https://www.googleapis.com')
    .describe("Drive API base URL of the `drive` connector provider (a credential's own `baseUrl` wins)."),
  KNOWLEDGE_WIKI_BASE_URL: z
    .string()
    .url()
    .optional()
    .describe('Confluence site URL of the `wiki` provider, e.g. `https://example.atlassian.net` (or set `baseUrl` on the credential).'),
  KNOWLEDGE_CHAT_BASE_URL: z.string().url().default('https://slack.com/api').describe('Slack Web API base URL of the `chat` provider.'),
  KNOWLEDGE_REPO_BASE_URL: z.string().url().default('https://api.github.com').describe('GitHub REST base URL of the `repo` provider.'),
  KNOWLEDGE_CERTIFIED_PROVIDERS: z
    .string()
    .default('drive,wiki,chat,repo')
    .describe('Providers that passed certification; the others are listed `certified: false` and cannot be queued.'),
  KNOWLEDGE_SYNC_LEASE_MS: z.coerce
    .number()
    .int()
    .min(3_000)
    .max(3_600_000)
    .default(300_000)
    .describe("A sync run's lease: renewed by its activity every third of it; Temporal notices a dead worker after two thirds."),
});

export type KnowledgeEnv = z.output<typeof knowledgeArea.schema>;

export interface KnowledgeConfig {
  /** The OpenAI-compatible embeddings endpoint; without `baseUrl` search is keyword only. */
  embeddings: { baseUrl: string | undefined; model: string; apiKey: string | undefined; timeoutMs: number; maxRetries: number };
  /** API base URLs of the connector providers (a credential's own `baseUrl` wins). */
  providerBaseUrls: { drive: string; wiki: string | undefined; chat: string; repo: string };
  /** Providers that passed certification; others are listed uncertified and cannot be queued. */
  certifiedProviders: string[];
  /** How long a sync run's lease (its running execution) lasts without a heartbeat; heartbeats renew it at one third. */
  syncLeaseMs: number;
}

export function knowledgeConfig(e: KnowledgeEnv): { knowledge: KnowledgeConfig } {
  return {
    knowledge: {
      embeddings: {
        baseUrl: e.EMBEDDINGS_BASE_URL || undefined,
        model: e.EMBEDDINGS_MODEL,
        apiKey: e.EMBEDDINGS_API_KEY || undefined,
        timeoutMs: e.EMBEDDINGS_TIMEOUT_MS,
        maxRetries: e.EMBEDDINGS_MAX_RETRIES,
      },
      providerBaseUrls: {
        drive: e.KNOWLEDGE_DRIVE_BASE_URL,
        wiki: e.KNOWLEDGE_WIKI_BASE_URL || undefined,
        chat: e.KNOWLEDGE_CHAT_BASE_URL,
        repo: e.KNOWLEDGE_REPO_BASE_URL,
      },
      certifiedProviders: list(e.KNOWLEDGE_CERTIFIED_PROVIDERS),
      syncLeaseMs: e.KNOWLEDGE_SYNC_LEASE_MS,
    },
  };
}
