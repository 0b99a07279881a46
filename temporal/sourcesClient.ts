import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { enabledPollingGroups } from '../services/mailer/store';
import { pollableSources } from '../services/sources/store';
import { SEARCH_ATTRIBUTES, svcNameValue, TASK_QUEUE, WORKFLOW_TYPES, type SearchAttributeName } from './shared';
import type { SourcePollInput } from './workflows/sources';
import type { MailPollInput } from './workflows/mailer';

/** Schedule id of an RSS source's poll. */
export const rssScheduleId = (sourceId: string) => `rss_${sourceId}`;
/** Schedule id of a CI source's poll. */
export const ciScheduleId = (sourceId: string) => `ci_${sourceId}`;
const isSourceSchedule = (id: string) => id.startsWith('rss_') || id.startsWith('ci_');

/**
 * Makes the `rss_…` and `ci_…` Temporal Schedules match the RSS and CI sources of live destinations: one per
 * source at its interval (recreated when the interval changed), removed when the source is
 * gone or its destination stopped. Idempotent; the API runs it periodically.
 */
export async function syncSourceSchedules(client: Client, em: EntityManager): Promise<{ kept: string[]; removed: string[] }> {
  const rows = await pollableSources(em);
  const wanted = new Map<string, PollSchedule>(
    rows.map((r) => {
      const input: SourcePollInput = { sourceId: r.id };
      const workflowType = r.kind === 'rss' ? WORKFLOW_TYPES.rssPoll : WORKFLOW_TYPES.ciPoll;
      const searchAttributes = {
        [SEARCH_ATTRIBUTES.WorkspaceId]: [r.workspaceId],
        [SEARCH_ATTRIBUTES.SvcWorkflowId]: [r.workflowId],
        [SEARCH_ATTRIBUTES.SvcTrigger]: [r.kind],
        [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(r.workflowName)],
      };
      return [r.kind === 'rss' ? rssScheduleId(r.id) : ciScheduleId(r.id), { interval: r.interval, workflowType, input, searchAttributes }];
    }),
  );
  return reconcilePollSchedules(client, isSourceSchedule, wanted);
}

/** Schedule id of a mail polling group's poll. */
export const mailPollScheduleId = (groupId: string) => `mailpoll_${groupId}`;

/**
 * Makes the `mailpoll_…` Temporal Schedules match the enabled polling groups: one per group at
 * its interval (recreated when the interval changed), removed when the group is disabled or
 * gone. `groupIds` limits the sync to those groups (others' schedules are left alone).
 */
export async function syncMailPollSchedules(
  client: Client,
  em: EntityManager,
  groupIds?: string[],
): Promise<{ kept: string[]; removed: string[] }> {
  const rows = await enabledPollingGroups(em, groupIds);
  const wanted = new Map<string, PollSchedule>(
    rows.map((r) => {
      const input: MailPollInput = { groupId: r.id };
      const searchAttributes = { [SEARCH_ATTRIBUTES.WorkspaceId]: [r.workspaceId], [SEARCH_ATTRIBUTES.SvcTrigger]: ['email'] };
      return [mailPollScheduleId(r.id), { interval: r.interval, workflowType: WORKFLOW_TYPES.mailPoll, input, searchAttributes }];
    }),
  );
  const inScope = (id: string) => id.startsWith('mailpoll_') && (!groupIds || groupIds.some((g) => mailPollScheduleId(g) === id));
  return reconcilePollSchedules(client, inScope, wanted);
}

/**
 * One poll Schedule as it should be: every `interval` seconds, start `workflowType` with `input`;
 * the Schedule and each poll it starts carry `searchAttributes` (WorkspaceId first of all).
 */
interface PollSchedule {
  interval: number;
  workflowType: string;
  input: SourcePollInput | MailPollInput;
  searchAttributes: Partial<Record<SearchAttributeName, string[]>>;
}

/**
 * Makes the Schedules `inScope` accepts match `wanted`: deletes those not wanted, creates the
 * missing ones, and recreates those whose interval changed or that carry no WorkspaceId (made
 * before polls had search attributes). A slow poll is never overlapped by the next one.
 */
async function reconcilePollSchedules(
  client: Client,
  inScope: (scheduleId: string) => boolean,
  wanted: Map<string, PollSchedule>,
): Promise<{ kept: string[]; removed: string[] }> {
  const existing = new Map<string, number | null>();
  for await (const listed of client.schedule.list()) {
    if (!inScope(listed.scheduleId)) continue;
    const every = listed.spec?.intervals?.[0]?.every;
    // A schedule without WorkspaceId is treated as out of date, so the next sync recreates it.
    const current = typeof every === 'number' && hasWorkspaceId(listed.searchAttributes) ? Math.round(every / 1000) : null;
    existing.set(listed.scheduleId, current);
  }
  const removed: string[] = [];
  for (const id of existing.keys()) {
    if (!wanted.has(id)) {
      await client.schedule.getHandle(id).delete().catch(ignoreNotFound);
      removed.push(id);
    }
  }
  for (const [id, poll] of wanted) {
    if (existing.get(id) === poll.interval) continue;
    if (existing.has(id)) await client.schedule.getHandle(id).delete().catch(ignoreNotFound);
    await client.schedule.create({
      scheduleId: id,
      spec: { intervals: [{ every: `${poll.interval}s` }] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      action: {
        type: 'startWorkflow',
        workflowType: poll.workflowType,
        taskQueue: TASK_QUEUE,
        workflowId: `poll_${id}`,
        args: [poll.input],
        searchAttributes: poll.searchAttributes,
      },
      searchAttributes: poll.searchAttributes,
    });
  }
  return { kept: [...wanted.keys()], removed };
}

function hasWorkspaceId(searchAttributes: Record<string, unknown> | undefined): boolean {
  const value = searchAttributes?.[SEARCH_ATTRIBUTES.WorkspaceId];
  return Array.isArray(value) && value.length > 0;
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof ScheduleNotFoundError)) throw err;
}
