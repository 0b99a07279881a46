import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookSchema, WorkflowTargetSchema, type Webhook, type Workflow } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';
import { requireSecretKey } from '../kernel/config';
import { forbidden, notFound } from '../kernel/errors';
import { newId, sha256Hex } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { deriveToken } from '../kernel/secrets';

export const WEBHOOK_FORBIDDEN = 'API key cannot access this webhook';
const WEBHOOK_TOKEN_PREFIX = 'whk_';

/** The invoke token of a generic webhook: derived from SECRET_KEY, so it can be shown again. */
export function webhookToken(secretKey: string, webhookId: string): string {
  return deriveToken(secretKey, 'webhook', webhookId, WEBHOOK_TOKEN_PREFIX);
}

/**
 * A webhook as callers see it. `token` is the invoke capability of a generic webhook; it is
 * null for error-tracker endpoints, whose random token was shown once at creation. The API
 * turns the token into an invoke URL (api/http/links.ts).
 */
export interface WebhookData {
  id: string;
  workspaceId: string;
  workflowId: string;
  nodeId: string;
  kind: Webhook['kind'];
  provider: 'errtracker' | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  token: string | null;
  /** The destination whose published version the webhook runs (list and get only). */
  destination?: { targetId: string; kind: 'production' | 'preview'; name: string } | null;
}

/** A webhook's data; needs SECRET_KEY (`unavailable` without it) only to derive a generic webhook's token. */
export function webhookData(wh: Webhook, secretKey: string | undefined): WebhookData {
  return {
    id: wh.id,
    workspaceId: wh.workspaceId,
    workflowId: wh.workflowId,
    nodeId: wh.nodeId,
    kind: wh.kind,
    provider: wh.kind === 'errtracker' ? 'errtracker' : null,
    enabled: wh.enabled,
    createdAt: wh.createdAt,
    updatedAt: wh.updatedAt,
    token: wh.kind === 'generic' ? webhookToken(requireSecretKey(secretKey), wh.id) : null,
  };
}

/**
 * Makes the published version's webhook triggers of one destination reachable: one generic
 * webhook per `webhook` node and destination (kept across publications, so its URL is stable;
 * previews and production never share one), and disables those whose node is gone.
 * Returns the webhooks of the version in node order.
 */
export async function syncWebhooks(
  em: EntityManager,
  secretKey: string,
  wf: Workflow,
  graph: WorkflowGraph,
  targetId: string,
): Promise<Webhook[]> {
  const nodes = graph.nodes.filter((n) => n.type === 'webhook');
  const existing = await em.find(WebhookSchema, { workflowId: wf.id, kind: 'generic', targetId });
  const now = new Date();
  const result: Webhook[] = [];
  for (const node of nodes) {
    let wh = existing.find((w) => w.nodeId === node.id);
    const dedupeHeader = typeof node.config?.dedupeHeader === 'string' ? node.config.dedupeHeader.toLowerCase() : undefined;
    if (!wh) {
      const id = newId('wh');
      wh = em.create(WebhookSchema, {
        id,
        workspaceId: wf.workspaceId,
        workflowId: wf.id,
        targetId,
        nodeId: node.id,
        kind: 'generic',
        tokenDigest: sha256Hex(webhookToken(secretKey, id)),
        enabled: true,
        config: dedupeHeader ? { dedupeHeader } : {},
        signingSecretEncrypted: null,
        createdAt: now,
        updatedAt: now,
      });
    } else {
      wh.enabled = true;
      wh.config = dedupeHeader ? { dedupeHeader } : {};
      wh.updatedAt = now;
    }
    result.push(wh);
  }
  for (const wh of existing) {
    if (!nodes.some((n) => n.id === wh.nodeId) && wh.enabled) {
      wh.enabled = false;
      wh.updatedAt = now;
    }
  }
  await em.flush();
  return result;
}

/** Webhooks of the principal's workspace with their destinations, newest first; `workflowId` narrows to one workflow. */
export async function listWebhooks(
  em: EntityManager,
  principal: WorkspacePrincipal,
  secretKey: string | undefined,
  workflowId?: string,
): Promise<WebhookData[]> {
  const webhooks = await em.find(
    WebhookSchema,
    { workspaceId: principal.workspaceId, kind: { $nin: ['mailer', 'rss', 'ci'] }, ...(workflowId ? { workflowId } : {}) },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  return withDestinations(em, webhooks, secretKey);
}

async function withDestinations(em: EntityManager, webhooks: Webhook[], secretKey: string | undefined): Promise<WebhookData[]> {
  const targetIds = [...new Set(webhooks.map((w) => w.targetId).filter((id): id is string => id !== null))];
  const targets = targetIds.length > 0 ? await em.find(WorkflowTargetSchema, { id: { $in: targetIds } }) : [];
  const byId = new Map(targets.map((t) => [t.id, { targetId: t.id, kind: t.kind, name: t.name }]));
  return webhooks.map((w) => ({ ...webhookData(w, secretKey), destination: w.targetId ? (byId.get(w.targetId) ?? null) : null }));
}

/** One webhook of the principal's workspace: 404 when missing, 403 when it belongs to another workspace. */
export async function getWebhook(
  em: EntityManager,
  principal: WorkspacePrincipal,
  secretKey: string | undefined,
  id: string,
): Promise<WebhookData> {
  const wh = await em.findOne(WebhookSchema, { id });
  if (!wh || wh.kind === 'mailer' || wh.kind === 'rss' || wh.kind === 'ci') throw notFound('Webhook not found');
  if (wh.workspaceId !== principal.workspaceId) throw forbidden(WEBHOOK_FORBIDDEN);
  // withDestinations gives one entry per webhook.
  return (await withDestinations(em, [wh], secretKey)).at(0)!;
}
