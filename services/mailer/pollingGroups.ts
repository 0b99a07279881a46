import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, MailerGoogleDwdConfigSchema } from '../../db/entities';
import { invalidInput, notFound } from '../errors';
import { newId, sha256Hex } from '../ids';
import type { WorkspacePrincipal } from '../principal';
import { sql } from './routes';

export const POLLING_GROUP_NOT_FOUND = 'Polling group not found';
/** Spec limits: polling interval 60 to 86400 s, default 300. */
export const POLLING_INTERVAL = { min: 60, max: 86_400, default: 300 } as const;

interface PollingGroupRow {
  id: string;
  provider: 'mailA' | 'mailB';
  credential_id: string | null;
  google_dwd_config_id: string | null;
  interval_seconds: number;
  enabled: boolean;
  cursor: string | null;
  next_poll_at: Date | null;
  last_polled_at: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function pollingGroupView(row: PollingGroupRow) {
  return {
    id: row.id,
    provider: row.provider,
    credentialId: row.credential_id,
    googleDwdConfigId: row.google_dwd_config_id,
    intervalSeconds: row.interval_seconds,
    enabled: row.enabled,
    cursor: row.cursor,
    nextPollAt: iso(row.next_poll_at),
    lastPolledAt: iso(row.last_polled_at),
    lastError: row.last_error,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
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
export async function upsertPollingGroup(em: EntityManager, principal: WorkspacePrincipal, input: PollingGroupInput): Promise<{ group: PollingGroupView; created: boolean }> {
  if ((input.credentialId === undefined) === (input.googleDwdConfigId === undefined)) throw invalidInput('Send exactly one of credentialId or googleDwdConfigId.');
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
  const identity = sha256Hex(JSON.stringify([principal.workspaceId, input.provider, input.credentialId ?? null, principal.principalId, input.googleDwdConfigId ?? null]));
  const interval = input.intervalSeconds ?? POLLING_INTERVAL.default;
  const enabled = input.enabled ?? true;
  const [row] = await sql<PollingGroupRow & { inserted: boolean }>(
    em,
    `insert into mailer_polling_groups (id, workspace_id, provider, credential_id, google_dwd_config_id, principal_id, identity_key, interval_seconds, enabled, next_poll_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, case when ? then now() else null end, now(), now())
     on conflict (identity_key) do update set
       interval_seconds = case when ? then excluded.interval_seconds else mailer_polling_groups.interval_seconds end,
       enabled = case when ? then excluded.enabled else mailer_polling_groups.enabled end,
       next_poll_at = case when (case when ? then excluded.enabled else mailer_polling_groups.enabled end)
                           then coalesce(mailer_polling_groups.next_poll_at, now()) else null end,
       updated_at = now()
     returning *, (xmax = 0) as inserted`,
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
  return { group: pollingGroupView(row), created: row.inserted };
}

export async function listPollingGroups(em: EntityManager, principal: WorkspacePrincipal): Promise<PollingGroupView[]> {
  const rows = await sql<PollingGroupRow>(em, `select * from mailer_polling_groups where workspace_id = ? order by created_at desc, id desc limit 500`, [principal.workspaceId]);
  return rows.map(pollingGroupView);
}

export async function getPollingGroup(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<PollingGroupView> {
  const [row] = await sql<PollingGroupRow>(em, `select * from mailer_polling_groups where id = ? and workspace_id = ?`, [id, principal.workspaceId]);
  if (!row) throw notFound(POLLING_GROUP_NOT_FOUND);
  return pollingGroupView(row);
}

/** PATCH: interval or enabled; disabling clears nextPollAt, enabling schedules a poll now. */
export async function patchPollingGroup(em: EntityManager, principal: WorkspacePrincipal, id: string, input: { intervalSeconds?: number; enabled?: boolean }): Promise<PollingGroupView> {
  await getPollingGroup(em, principal, id);
  const [row] = await sql<PollingGroupRow>(
    em,
    `update mailer_polling_groups set interval_seconds = coalesce(?, interval_seconds), enabled = coalesce(?, enabled),
       next_poll_at = case when coalesce(?, enabled) then coalesce(next_poll_at, now()) else null end, updated_at = now()
     where id = ? and workspace_id = ? returning *`,
    [input.intervalSeconds ?? null, input.enabled ?? null, input.enabled ?? null, id, principal.workspaceId],
  );
  return pollingGroupView(row);
}
