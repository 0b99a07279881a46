import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from './store';
import { WebhookSchema, WorkflowTargetSchema, WorkflowVersionSchema, type Workflow, type WorkflowTarget } from '../../db/entities';
import { requireSecretKey } from '../kernel/config';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { newId, randomToken, sha256Hex } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { decryptSecret, encryptSecret } from '../kernel/secrets';
import { findTargetOf } from '../destinations/runtime';
import { ensureProductionTarget } from '../destinations/model';
import { requireEventSourceTrigger } from '../destinations/sources';
import { loadWorkflow } from '../workflows/views';

export const ROUTE_NOT_FOUND = 'Mailer route not found';

export interface MailerRouteRow {
  id: string;
  workspace_id: string;
  workflow_id: string;
  target_id: string;
  target_bound: boolean;
  webhook_id: string;
  address: string;
  description: string | null;
  enabled: boolean;
  signing_secret_encrypted: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface MailerRouteView {
  id: string;
  address: string;
  workflowId: string;
  executionTargetId: string | null;
  description: string | null;
  enabled: boolean;
  targetEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export { sql } from './store';

/** Addresses are stored trimmed and lowercased; anything without a single `@` is refused. */
export function normalizeAddress(raw: string): string {
  const address = raw.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(address) || address.length > 320) throw invalidInput('address must be an email address.');
  return address;
}

export async function routeView(em: EntityManager, row: MailerRouteRow): Promise<MailerRouteView> {
  const target = await em.findOne(WorkflowTargetSchema, { id: row.target_id });
  return {
    id: row.id,
    address: row.address,
    workflowId: row.workflow_id,
    executionTargetId: row.target_bound ? row.target_id : null,
    description: row.description,
    enabled: row.enabled,
    targetEnabled: target?.enabled ?? false,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export function routeLinks(origin: string, routeId: string) {
  return {
    self: `${origin}/api/v1/mailer/routes/${routeId}`,
    inbound: `${origin}/api/v1/mailer/inbound`,
    signedInbound: `${origin}/api/v1/mailer/inbound/${routeId}`,
  };
}

/** A route of the principal's workspace; other workspaces' routes are not found. */
export async function loadRoute(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<MailerRouteRow> {
  const [row] = await sql<MailerRouteRow>(em, `select * from mailer_routes where id = ? and workspace_id = ?`, [id, principal.workspaceId]);
  if (!row) throw notFound(ROUTE_NOT_FOUND);
  return row;
}

export async function listRoutes(em: EntityManager, principal: WorkspacePrincipal): Promise<MailerRouteRow[]> {
  return sql<MailerRouteRow>(em, `select * from mailer_routes where workspace_id = ? order by created_at desc, id desc limit 500`, [
    principal.workspaceId,
  ]);
}

const duplicate = () => conflict('A route with this address already exists for this destination.');

export interface CreateRouteInput {
  address: string;
  workflowId: string;
  executionTargetId?: string;
  description?: string;
  enabled?: boolean;
}

/**
 * Creates an inbound route. Without `executionTargetId` it belongs to the workflow's Production
 * destination (the address-only endpoint's route). A `mailer` webhook row backs it, so accepted
 * messages share the webhook outbox. The signing secret is returned once and stored encrypted.
 */
export async function createRoute(
  em: EntityManager,
  secretKeySetting: string | undefined,
  principal: WorkspacePrincipal,
  input: CreateRouteInput,
): Promise<{ route: MailerRouteRow; signingSecret: string }> {
  const secretKey = requireSecretKey(secretKeySetting);
  const address = normalizeAddress(input.address);
  const workflow = await loadWorkflow(em, principal, input.workflowId, { includeTrashed: false });
  const target =
    input.executionTargetId !== undefined
      ? await findTargetOf(em, workflow, input.executionTargetId)
      : await ensureProductionTarget(em, workflow);
  await requireMailTrigger(em, workflow, target);
  const signingSecret = `msk_${randomToken(32)}`;
  const id = newId('mrt');
  const now = new Date();
  return em.transactional(async (tx) => {
    const [existing] = await sql(tx, `select id from mailer_routes where target_id = ? and address = ?`, [target.id, address]);
    if (existing) throw duplicate();
    const webhook = tx.create(WebhookSchema, {
      id: newId('wh'),
      workspaceId: workflow.workspaceId,
      workflowId: workflow.id,
      targetId: target.id,
      nodeId: `mailer:${id}`,
      kind: 'mailer',
      tokenDigest: sha256Hex(`mailer\0${id}\0${randomToken(16)}`),
      enabled: true,
      config: {},
      signingSecretEncrypted: null,
      createdAt: now,
      updatedAt: now,
    });
    await tx.flush();
    const rows = await sql<MailerRouteRow>(
      tx,
      `insert into mailer_routes (id, workspace_id, workflow_id, target_id, target_bound, webhook_id, address, description, enabled, signing_secret_encrypted, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (target_id, address) do nothing returning *`,
      [
        id,
        workflow.workspaceId,
        workflow.id,
        target.id,
        input.executionTargetId !== undefined,
        webhook.id,
        address,
        input.description ?? null,
        input.enabled ?? true,
        encryptSecret(secretKey, signingSecret),
        now,
        now,
      ],
    );
    const [route] = rows;
    if (!route) throw duplicate();
    return { route, signingSecret };
  });
}

/**
 * A mail route starts its destination's version with the message as input, so that version
 * needs a Start or plain Webhook trigger (the contract's `event_source_trigger_not_found`, the
 * rule RSS sources follow). Checked against the destination's saved version; Production of a
 * workflow never deployed has none yet, and its draft is checked instead, so a route can be
 * set up before the first deploy.
 */
async function requireMailTrigger(em: EntityManager, workflow: Workflow, target: WorkflowTarget): Promise<void> {
  const saved = target.candidateVersionId ? await em.findOne(WorkflowVersionSchema, { id: target.candidateVersionId }) : null;
  if (!saved && target.kind === 'production') return requireEventSourceTrigger(workflow.nodes, 'A mail route', 'the workflow');
  requireEventSourceTrigger(saved?.nodes ?? [], 'A mail route', `the saved version of destination "${target.name}"`);
}

export interface PatchRouteInput {
  enabled?: boolean;
  workflowId?: string;
  description?: string | null;
  rotateSigningSecret?: boolean;
}

/** Updates a route; a target-bound route keeps its workflow. A rotation returns the new secret once. */
export async function patchRoute(
  em: EntityManager,
  secretKeySetting: string | undefined,
  principal: WorkspacePrincipal,
  id: string,
  input: PatchRouteInput,
): Promise<{ route: MailerRouteRow; signingSecret?: string }> {
  const row = await loadRoute(em, principal, id);
  let { workflow_id: workflowId, target_id: targetId } = row;
  if (input.workflowId !== undefined && input.workflowId !== row.workflow_id) {
    if (row.target_bound) throw conflict('Target-bound routes cannot change workflow or destination.');
    const workflow = await loadWorkflow(em, principal, input.workflowId, { includeTrashed: false });
    workflowId = workflow.id;
    const production = await ensureProductionTarget(em, workflow);
    await requireMailTrigger(em, workflow, production);
    targetId = production.id;
    const [taken] = await sql(em, `select id from mailer_routes where target_id = ? and address = ? and id <> ?`, [
      targetId,
      row.address,
      row.id,
    ]);
    if (taken) throw duplicate();
  }
  let signingSecret: string | undefined;
  let sealed = row.signing_secret_encrypted;
  if (input.rotateSigningSecret) {
    signingSecret = `msk_${randomToken(32)}`;
    sealed = encryptSecret(requireSecretKey(secretKeySetting), signingSecret);
  }
  const [updated] = await sql<MailerRouteRow>(
    em,
    `update mailer_routes set workflow_id = ?, target_id = ?, enabled = ?, description = ?, signing_secret_encrypted = ?, updated_at = now() where id = ? returning *`,
    [
      workflowId,
      targetId,
      input.enabled ?? row.enabled,
      input.description !== undefined ? input.description : row.description,
      sealed,
      row.id,
    ],
  );
  if (!updated) throw notFound(ROUTE_NOT_FOUND);
  await sql(em, `update webhooks set workflow_id = ?, target_id = ?, enabled = ?, updated_at = now() where id = ?`, [
    workflowId,
    targetId,
    updated.enabled,
    row.webhook_id,
  ]);
  return { route: updated, ...(signingSecret ? { signingSecret } : {}) };
}

/** The route's signing secret, or null when it has none (or it cannot be read). */
export function signingSecretOf(route: MailerRouteRow, secretKey: string | undefined): string | null {
  if (!route.signing_secret_encrypted || !secretKey) return null;
  try {
    return decryptSecret(secretKey, route.signing_secret_encrypted);
  } catch {
    return null;
  }
}
