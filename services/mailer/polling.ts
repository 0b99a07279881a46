import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, MailerPollingGroupSchema, type MailerPollingGroup } from '../../db/entities';
import { mailerPrincipal, storeAttachments, type AttachmentStore } from './attachments';
import { acceptInboundMail, withRawMime, type InboundMail } from './messages';
import {
  accountOf,
  delegatedAccount,
  MailAccountError,
  planPoll,
  type FetchedMail,
  type MailAccount,
  type MailProviderDeps,
} from './providers';
import { sql, type MailerRouteRow } from './routes';

export interface MailPollDeps extends MailProviderDeps {
  /** Where attachments become Files. */
  files: AttachmentStore;
  /** Called before each message (the activity's heartbeat). */
  heartbeat?: () => void;
}

export interface MailPollResult {
  outcome: 'skipped' | 'baseline' | 'polled' | 'failed';
  /** New messages stored (each with one outbox entry, so one run). */
  stored: number;
  /** Messages already stored by an earlier, interrupted poll. */
  duplicates: number;
  /** Messages no enabled route of the workspace is addressed by. */
  unrouted: number;
  error?: string;
}

/**
 * One poll of a polling group (its Temporal Schedule's workflow runs it as an activity): from
 * the stored cursor (Gmail historyId, Graph deltaLink, IMAP UIDVALIDITY + last UID), each new
 * message is fetched as raw MIME, parsed, routed by its recipients (or to the delegation
 * configuration's route) and stored with its outbox entry; the cursor advances only after all
 * of them are stored. A poll cut short (a crash, a provider error) leaves the cursor where it
 * was: the next poll fetches the same messages again and the stored ones are deduplicated by
 * their provider id, so none is lost and none starts a second run. The first poll of a group
 * records a baseline and stores nothing.
 */
export async function pollMailGroup(em: EntityManager, deps: MailPollDeps, groupId: string): Promise<MailPollResult> {
  const group = await em.fork().findOne(MailerPollingGroupSchema, { id: groupId });
  const result: MailPollResult = { outcome: 'skipped', stored: 0, duplicates: 0, unrouted: 0 };
  if (!group || !group.enabled) return result;
  const finish = async (outcome: MailPollResult['outcome'], changes: { cursor?: string; lastError: string | null }) => {
    const now = new Date();
    const next = new Date(now.getTime() + group.intervalSeconds * 1000);
    await em.nativeUpdate(
      MailerPollingGroupSchema,
      { id: group.id },
      { lastPolledAt: now, nextPollAt: next, lastError: changes.lastError, updatedAt: now },
    );
    // The cursor moves only from the one this poll started at: a concurrent poll cannot move it back.
    if (changes.cursor !== undefined)
      await em.nativeUpdate(MailerPollingGroupSchema, { id: group.id, cursor: group.cursor }, { cursor: changes.cursor });
    return { ...result, outcome, ...(changes.lastError && outcome === 'failed' ? { error: changes.lastError } : {}) };
  };

  let account: MailAccount;
  let fixedRouteId: string | null = null;
  try {
    if (group.googleDwdConfigId)
      ({ account, routeId: fixedRouteId } = await delegatedAccount(em, deps, group.workspaceId, group.googleDwdConfigId));
    else {
      const row = group.credentialId
        ? await em.findOne(CredentialSchema, { id: group.credentialId, workspaceId: group.workspaceId })
        : null;
      if (!row) throw new MailAccountError('The polling group names a credential that no longer exists.');
      account = accountOf(em, deps, row);
    }
  } catch (err) {
    return finish('failed', { lastError: messageOf(err) });
  }
  let plan;
  try {
    plan = await planPoll(deps, account, group.cursor);
  } catch (err) {
    return finish('failed', { lastError: messageOf(err) });
  }
  try {
    for (const item of plan.pending) {
      deps.heartbeat?.();
      const fetched = await plan.fetch(item);
      if (!fetched) continue;
      const outcome = await storeFetched(em, deps, group, fixedRouteId, fetched);
      result[outcome]++;
    }
  } catch (err) {
    return finish('failed', { lastError: messageOf(err) });
  } finally {
    await plan.close();
  }
  return finish(plan.baseline ? 'baseline' : 'polled', { cursor: plan.next, lastError: plan.note ?? null });
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 1000);

async function storeFetched(
  em: EntityManager,
  deps: MailPollDeps,
  group: MailerPollingGroup,
  fixedRouteId: string | null,
  fetched: FetchedMail,
): Promise<'stored' | 'duplicates' | 'unrouted'> {
  const blank: InboundMail = {
    from: '',
    to: [],
    subject: '',
    text: null,
    html: null,
    externalMessageId: fetched.externalId,
    externalThreadId: fetched.externalThreadId,
    messageIdHeader: null,
    inReplyTo: null,
    references: [],
    providerMetadata: { ...fetched.metadata, pollingGroupId: group.id },
  };
  const { mail, attachments } = await withRawMime(blank, fetched.raw);
  const route = await routeFor(em, group.workspaceId, fixedRouteId, mail.to);
  if (!route) return 'unrouted';
  const storeFiles =
    attachments.length > 0
      ? () => storeAttachments(em, deps.files, mailerPrincipal(group.workspaceId, `polling:${group.id}`), attachments)
      : undefined;
  const accepted = await acceptInboundMail(em, route, { ...mail, to: mail.to.map((a) => a.toLowerCase()) }, 'deduplicate', storeFiles);
  return accepted.deduplicated ? 'duplicates' : 'stored';
}

/** The delegation's route, else the enabled route of the workspace a recipient names (Production routes first). */
async function routeFor(
  em: EntityManager,
  workspaceId: string,
  fixedRouteId: string | null,
  recipients: string[],
): Promise<MailerRouteRow | undefined> {
  if (fixedRouteId) {
    const [route] = await sql<MailerRouteRow>(em, `select * from mailer_routes where id = ? and workspace_id = ? and enabled`, [
      fixedRouteId,
      workspaceId,
    ]);
    return route;
  }
  const addresses = [...new Set(recipients.map((a) => a.trim().toLowerCase()).filter(Boolean))].slice(0, 200);
  if (addresses.length === 0) return undefined;
  const [route] = await sql<MailerRouteRow>(
    em,
    `select * from mailer_routes where workspace_id = ? and enabled and address in (${addresses.map(() => '?').join(', ')}) order by target_bound asc, created_at asc, id asc limit 1`,
    [workspaceId, ...addresses],
  );
  return route;
}
