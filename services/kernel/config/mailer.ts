import { z } from 'zod';
import { defineArea } from './define';

/** Mail provider APIs of polling and replies (services/mailer). */
export const mailerArea = defineArea('mailer', 'Mailer', {
  GMAIL_API_BASE_URL: z
    .string()
    .url()
    .default('https://gmail.googleapis.com/gmail/v1')
    .describe("Gmail API base (version prefix included) for `mailA` polling and replies; a credential's own `baseUrl` wins."),
  GRAPH_API_BASE_URL: z
    .string()
    .url()
    .default('https://graph.microsoft.com/v1.0')
    .describe("Microsoft Graph base (version prefix included) for `mailB` polling and replies; a credential's own `baseUrl` wins."),
  GOOGLE_OAUTH_TOKEN_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "Where delegated Gmail tokens are minted (JWT bearer grant) instead of the service-account key's `token_uri`; the JWT audience stays `token_uri`. For a proxy or a loopback fake.",
    ),
  MAILER_PROVIDER_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(300_000)
    .default(20_000)
    .describe(
      'Budget of one Gmail/Graph request (and of a token grant or refresh), and of the IMAP connection, greeting and socket idle time.',
    ),
});

export type MailerEnv = z.output<typeof mailerArea.schema>;

/** Mail provider APIs of polling and replies (services/mailer); a credential's own `baseUrl` wins. */
export interface MailerConfig {
  /** GMAIL_API_BASE_URL, version prefix included (`…/gmail/v1`). */
  gmailBaseUrl: string;
  /** GRAPH_API_BASE_URL, version prefix included (`…/v1.0`). */
  graphBaseUrl: string;
  /** MAILER_PROVIDER_TIMEOUT_MS: one provider request (and one IMAP session step). */
  timeoutMs: number;
  /** GOOGLE_OAUTH_TOKEN_URL: where delegated tokens are minted instead of a service-account key's token_uri. */
  googleTokenUrl?: string;
}

export function mailerConfig(e: MailerEnv): { mailer: MailerConfig } {
  return {
    mailer: {
      gmailBaseUrl: e.GMAIL_API_BASE_URL,
      graphBaseUrl: e.GRAPH_API_BASE_URL,
      timeoutMs: e.MAILER_PROVIDER_TIMEOUT_MS,
      googleTokenUrl: e.GOOGLE_OAUTH_TOKEN_URL,
    },
  };
}
