import { z } from 'zod';
import { defineArea, invalidConfiguration, SECRET } from './define';

/** The web search provider of research runs that name no `sourceUrls` (services/research/search.ts). */
export const researchArea = defineArea('research', 'Research', {
  RESEARCH_SEARCH_PROVIDER: z
    .enum(['searxng', 'brave'])
    .optional()
    .describe(
      "The web search provider of research runs created with a `query` and no `sourceUrls`: `searxng` (a SearxNG instance's JSON API, `GET <url>/search?q=…&format=json`) or `brave` (the Brave Search API). Unset: no web search, and such a run is `400 validation_failed` naming this variable.",
    ),
  RESEARCH_SEARCH_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "The provider's base URL: the SearxNG instance (e.g. `http://searxng:8080`; required with `searxng`, its `json` format must be enabled), or the Brave Search API (default `https://api.search.brave.com`). Reached even on a private network: it is the operator's, not a tenant's.",
    ),
  RESEARCH_SEARCH_API_KEY: z
    .string()
    .min(1)
    .optional()
    .meta(SECRET)
    .describe(
      'Brave: the subscription token sent as `X-Subscription-Token` (required). SearxNG: sent as `Authorization: Bearer` when set (an instance behind an authenticating proxy).',
    ),
});

export type ResearchEnv = z.output<typeof researchArea.schema>;

export type WebSearchProviderName = 'searxng' | 'brave';

/** The configured web search provider. */
export interface WebSearchConfig {
  provider: WebSearchProviderName;
  /** Base URL without a trailing slash. */
  baseUrl: string;
  apiKey: string | undefined;
}

export interface ResearchConfig {
  /** null: no provider, so research runs must name their `sourceUrls`. */
  research: { search: WebSearchConfig | null };
}

const BRAVE_DEFAULT_URL = 'https://api.search.brave.com';

export function researchConfig(e: ResearchEnv): ResearchConfig {
  const provider = e.RESEARCH_SEARCH_PROVIDER;
  if (!provider) {
    if (e.RESEARCH_SEARCH_URL || e.RESEARCH_SEARCH_API_KEY)
      throw invalidConfiguration('RESEARCH_SEARCH_URL and RESEARCH_SEARCH_API_KEY need RESEARCH_SEARCH_PROVIDER (searxng or brave)');
    return { research: { search: null } };
  }
  if (provider === 'searxng' && !e.RESEARCH_SEARCH_URL)
    throw invalidConfiguration(
      'RESEARCH_SEARCH_URL: required when RESEARCH_SEARCH_PROVIDER is searxng (the instance, e.g. http://searxng:8080)',
    );
  if (provider === 'brave' && !e.RESEARCH_SEARCH_API_KEY)
    throw invalidConfiguration('RESEARCH_SEARCH_API_KEY: required when RESEARCH_SEARCH_PROVIDER is brave (its X-Subscription-Token)');
  const baseUrl = (e.RESEARCH_SEARCH_URL ?? BRAVE_DEFAULT_URL).replace(/\/+$/, '');
  return { research: { search: { provider, baseUrl, apiKey: e.RESEARCH_SEARCH_API_KEY } } };
}
