/**
 * The API's one link builder: every absolute URL a response carries is built here from the
 * request origin (`requestOrigin(ctx)` in ./urls) and the ids or tokens services return.
 * Services never see a URL.
 */
import type { WebhookData } from '../../services/webhooks';

// --- Webhooks -------------------------------------------------------------------------------

/** Public invoke URL of a generic webhook token. */
export function webhookInvokeUrl(origin: string, token: string): string {
  return `${origin}/api/webhooks/${token}`;
}

/** Public ingress URL of an error-tracker endpoint token (shown once, at creation). */
export function errtrackerInvokeUrl(origin: string, token: string): string {
  return `${origin}/api/integrations/errtracker/${token}`;
}

/** The webhook resource itself. */
export function webhookUrl(origin: string, webhookId: string): string {
  return `${origin}/api/v1/webhooks/${webhookId}`;
}

/**
 * A webhook as the API answers it: its data with the token replaced by `invokeUrl` and
 * `links.invoke` (both null for error-tracker endpoints, whose token is not kept).
 */
export function webhookWithLinks(origin: string, webhook: WebhookData) {
  const { token, ...data } = webhook;
  const invokeUrl = token === null ? null : webhookInvokeUrl(origin, token);
  return { ...data, invokeUrl, links: { invoke: invokeUrl } };
}

/** The deploy response's links to the first webhook of the deployed version (null without one). */
export function deployedWebhookLinks(origin: string, first: WebhookData | undefined) {
  const invoke = first?.token ? webhookInvokeUrl(origin, first.token) : null;
  return { webhook: first ? webhookUrl(origin, first.id) : null, invoke };
}
