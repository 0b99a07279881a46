import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, MailerGoogleDwdConfigSchema, MailerPollingGroupSchema, type MailerGoogleDwdConfig } from '../../db/entities';
import { invalidInput, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { loadRoute, type MailerRouteRow } from './routes';
import { upsertGoogleDwdConfig } from './store';

export interface GoogleDwdView {
  id: string;
  serviceAccountCredentialId: string;
  subject: string;
  createdAt: string;
  updatedAt: string;
}

export const googleDwdView = (c: MailerGoogleDwdConfig): GoogleDwdView => ({
  id: c.id,
  serviceAccountCredentialId: c.credentialId,
  subject: c.subject,
  createdAt: c.createdAt.toISOString(),
  updatedAt: c.updatedAt.toISOString(),
});

export interface GoogleDwdInput {
  /** The `mailA` credential of the service account; null clears the binding. */
  serviceAccountCredentialId: string | null;
  /** The Workspace user the service account acts as (required when binding). */
  subject?: string | null;
}

/**
 * Binds a route to a Google Workspace mailbox through domain-wide delegation, or clears the
 * binding. A rebinding keeps the configuration's id (polling groups name it); clearing removes
 * it and disables the polling groups that used it.
 */
export async function setGoogleDwd(
  em: EntityManager,
  principal: WorkspacePrincipal,
  routeId: string,
  input: GoogleDwdInput,
): Promise<{ route: MailerRouteRow; googleDwd: GoogleDwdView | null }> {
  const route = await loadRoute(em, principal, routeId);
  if (input.serviceAccountCredentialId === null) {
    if (input.subject !== undefined && input.subject !== null) throw invalidInput('subject must be omitted when clearing the delegation.');
    const existing = await em.findOne(MailerGoogleDwdConfigSchema, { routeId: route.id, workspaceId: principal.workspaceId });
    if (existing) {
      await em.transactional(async (tx) => {
        const now = new Date();
        await tx.nativeUpdate(
          MailerPollingGroupSchema,
          { googleDwdConfigId: existing.id, workspaceId: principal.workspaceId },
          { enabled: false, nextPollAt: null, lastError: 'The route delegation was cleared.', updatedAt: now },
        );
        await tx.nativeDelete(MailerGoogleDwdConfigSchema, { id: existing.id });
      });
    }
    return { route, googleDwd: null };
  }
  const subject = (input.subject ?? '').trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(subject) || subject.length > 320) throw invalidInput('subject must be an email address.');
  const credential = await em.findOne(CredentialSchema, { id: input.serviceAccountCredentialId, workspaceId: principal.workspaceId });
  if (!credential) throw notFound('Credential not found');
  if (credential.type !== 'mailA')
    throw invalidInput(`serviceAccountCredentialId must name a mailA credential; this one is ${credential.type}.`);
  const now = new Date();
  await upsertGoogleDwdConfig(em, {
    id: newId('gdwd'),
    workspaceId: principal.workspaceId,
    routeId: route.id,
    credentialId: credential.id,
    subject,
    now,
  });
  const config = await em.fork().findOneOrFail(MailerGoogleDwdConfigSchema, { routeId: route.id });
  return { route, googleDwd: googleDwdView(config) };
}

/** The route's delegation binding, if any. */
export async function getGoogleDwd(em: EntityManager, workspaceId: string, routeId: string): Promise<MailerGoogleDwdConfig | null> {
  return em.fork().findOne(MailerGoogleDwdConfigSchema, { routeId, workspaceId });
}
