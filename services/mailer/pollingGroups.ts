import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, MailerGoogleDwdConfigSchema, MailerPollingGroupSchema, type MailerPollingGroup } from '../../db/entities';
import { invalidInput, notFound } from '../kernel/errors';
import { newId, sha256Hex } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { sql } from './routes';

export const POLLING_GROUP_NOT_FOUND = 'Polling group not found';
/** Spec limits: polling interval 60 to 86400 s, default 300. */
export const POLLING_INTERVAL = { min: 60, max: 86_400, default: 300 } as const;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function pollingGroupView(row: MailerPollingGroup) {
  return {
    id: row.id,
    provider: row.provider,
    credentialId: row.credentialId,
    googleDwdConfigId: row.googleDwdConfigId,
    intervalSeconds: row.intervalSeconds,
    enabled: row.enabled,
    cursor: row.cursor,
    nextPollAt: iso(row.nextPollAt),
    lastPolledAt: iso(row.lastPolledAt),
    lastError: row.lastError,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}
export type PollingGroupView = ReturnType<typeof pollingGroupView>;

export interface PollingGroupInput {
  provider: 'mailA' | 'mailB';
  credentialId?: string;
  googleDwdConfigId?: string;
  intervalSeconds?: number;
  enabled?: boolean;
}

/**
 * Creates a polling group, or updates the one with the same identity (workspace, provider,
 * credential, principal, delegation config): `created` says which. The credential must be a
 * credential of the workspace of the provider's type.
 */
export async function upsertPollingGroup(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: PollingGroupInput,
): Promise<{ group: PollingGroupView; created: boolean }> {
  if ((input.credentialId === undefined) === (input.googleDwdConfigId === undefined))
    throw invalidInput('Send exactly one of credentialId or googleDwdConfigId.');
  if (input.googleDwdConfigId !== undefined) {
    if (input.provider !== 'mailA') throw invalidInput('googleDwdConfigId applies to provider mailA only.');
    const config = await em.findOne(MailerGoogleDwdConfigSchema, { id: input.googleDwdConfigId, workspaceId: principal.workspaceId });
    if (!config) throw notFound('Delegation configuration not found');
  } else {
    const credential = await em.findOne(CredentialSchema, { id: input.credentialId!, workspaceId: principal.workspaceId });
    if (!credential) throw notFound('Credential not found');
    // The provider's own API, or its mailbox over IMAP (both providers serve IMAP).
    if (credential.type !== input.provider && credential.type !== 'imap') {
      throw invalidInput(`credentialId must name a ${input.provider} or imap credential; this one is ${credential.type}.`);
    }
  }
  const identity = sha256Hex(
    JSON.stringify([
      principal.workspaceId,
      input.provider,
      input.credentialId ?? null,
      principal.principalId,
      input.googleDwdConfigId ?? null,
    ]),
  );
  const interval = input.intervalSeconds ?? POLLING_INTERVAL.default;
  const enabled = input.enabled ?? true;
  const [row] = await sql<{ id: string; inserted: boolean }>(
    em,
    `insert into mailer_polling_groups (id, workspace_id, provider, credential_id, google_dwd_config_id, principal_id, identity_key, interval_seconds, enabled, next_poll_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, case when ? then now() else null end, now(), now())
     on conflict (identity_key) do update set
       interval_seconds = case when ? then excluded.interval_seconds else mailer_polling_groups.interval_seconds end,
       enabled = case when ? then excluded.enabled else mailer_polling_groups.enabled end,
       next_poll_at = case when (case when ? then excluded.enabled else mailer_polling_groups.enabled end)
                           then coalesce(mailer_polling_groups.next_poll_at, now()) else null end,
       updated_at = now()
     returning id, (xmax = 0) as inserted`,
    [
      newId('mpg'),
      principal.workspaceId,
      input.provider,
      input.credentialId ?? null,
      input.googleDwdConfigId ?? null,
      principal.principalId,
      identity,
      interval,
      enabled,
      enabled,
      input.intervalSeconds !== undefined,
      input.enabled !== undefined,
      input.enabled !== undefined,
    ],
  );
  if (!row) throw new Error('upsert into mailer_polling_groups returned no row');
  const group = await em.fork().findOneOrFail(MailerPollingGroupSchema, { id: row.id });
  return { group: pollingGroupView(group), created: row.inserted };
}

export async function listPollingGroups(em: EntityManager, principal: WorkspacePrincipal): Promise<PollingGroupView[]> {
  const rows = await em.find(
    MailerPollingGroupSchema,
    { workspaceId: principal.workspaceId },
    { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: 500 },
  );
  return rows.map(pollingGroupView);
}

async function loadPollingGroup(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<MailerPollingGroup> {
  const row = await em.fork().findOne(MailerPollingGroupSchema, { id, workspaceId: principal.workspaceId });
  if (!row) throw notFound(POLLING_GROUP_NOT_FOUND);
  return row;
}

export async function getPollingGroup(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<PollingGroupView> {
  return pollingGroupView(await loadPollingGroup(em, principal, id));
}

/** PATCH: interval or enabled; disabling clears nextPollAt, enabling schedules a poll now (or keeps the pending one). */
export async function patchPollingGroup(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  input: { intervalSeconds?: number; enabled?: boolean },
): Promise<PollingGroupView> {
  const current = await loadPollingGroup(em, principal, id);
  const enabled = input.enabled ?? current.enabled;
  await em.nativeUpdate(
    MailerPollingGroupSchema,
    { id, workspaceId: principal.workspaceId },
    {
      intervalSeconds: input.intervalSeconds ?? current.intervalSeconds,
      enabled,
      nextPollAt: enabled ? (current.nextPollAt ?? new Date()) : null,
      updatedAt: new Date(),
    },
  );
  return pollingGroupView(await loadPollingGroup(em, principal, id));
}
