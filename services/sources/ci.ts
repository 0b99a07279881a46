import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, TargetSourceSchema, type CiJobState, type CiSourceConfig } from '../../db/entities';
import { httpRequest } from '../kernel/outbound';
import { toStorable } from '../kernel/storableText';
import { enqueueSourceEvent, execOf, sourceWebhookId, targetIsLive } from './outbox';
import { credentialKeyring, type CredentialKeySettings } from '../credentials/keys';
import { openCredential } from '../credentials/crud';
import { credentialHeaders } from '../credentials/http';
import { assertCredentialDestination } from '../credentials/resolve';
import type { PollResult } from './rss';

/** New builds one job may start in one poll; older ones beyond it are counted in `omittedBuildCount`. */
export const CI_MAX_BUILDS_PER_POLL = 20;

interface Build {
  number: number;
  result: string | null;
  url: string | null;
  timestamp: number | null;
}

export interface CiPollDeps {
  keys: CredentialKeySettings;
  allowPrivateNetworks: boolean;
  /** CREDENTIAL_PROVIDER_BASE_URLS `ci`, used when the credential has no baseUrl. */
  defaultBaseUrl?: string;
  timeoutMs?: number;
}

/** `a/b` (a job in folder a) is `job/a/job/b` in the Jenkins-style API. */
const jobPath = (job: string) =>
  job
    .split('/')
    .map((part) => `job/${encodeURIComponent(part)}`)
    .join('/');

/**
 * Polls one CI source: for each watched job, `GET {base}/job/{name}/api/json?tree=builds[number,result,url,timestamp]`
 * with the source's credential. A job's first poll records its newest build as the baseline.
 * Later, completed builds newer than `lastSeenBuildNumber` (and older than any build still
 * running) that match the result filter get one outbox entry each (deduplicated by job and
 * build number); the job's state advances in the same transaction. Errors stay per job.
 */
export async function pollCiSource(em: EntityManager, deps: CiPollDeps, sourceId: string): Promise<PollResult> {
  const source = await em.fork().findOne(TargetSourceSchema, { id: sourceId, kind: 'ci' });
  if (!source) return { outcome: 'skipped', started: 0 };
  if (!(await targetIsLive(em, source.targetId))) return { outcome: 'skipped', started: 0 };
  const config = source.config as CiSourceConfig;
  const state = source.state;
  const polledAt = new Date().toISOString();
  const statuses: Record<string, CiJobState> = { ...(state.jobStatuses ?? {}) };
  const save = (tx: EntityManager, error: string | null) =>
    execOf(tx)(`update workflow_target_sources set state = ?::jsonb, updated_at = now() where id = ?`, [
      JSON.stringify(toStorable({ ...state, jobStatuses: statuses, lastPolledAt: polledAt, error })),
      source.id,
    ]);

  let headers: Record<string, string>;
  let base: string;
  try {
    const ring = credentialKeyring(deps.keys);
    const row = await em.findOne(CredentialSchema, { id: config.credentialId, workspaceId: source.workspaceId });
    if (!ring || !row) throw new Error('The CI credential is missing or cannot be read.');
    const value = openCredential(ring, row);
    const configured = typeof value.baseUrl === 'string' ? value.baseUrl : deps.defaultBaseUrl;
    if (!configured) throw new Error('No CI server address is configured for this credential.');
    base = configured.endsWith('/') ? configured : `${configured}/`;
    // Any credential of the workspace may be named by a source: it goes only to a host it is
    // bound to (a ci credential's own baseUrl, or the deployment's ci base URL), checked before
    // any request (issue 27 item 5). Job paths are encoded, so every request stays on `base`.
    assertCredentialDestination(row, value, base, deps.defaultBaseUrl ? { ci: [deps.defaultBaseUrl] } : {});
    headers = { ...credentialHeaders({ type: row.type, value }), accept: 'application/json' };
  } catch (err) {
    await save(em, (err as Error).message.slice(0, 500));
    return { outcome: 'failed', started: 0, error: (err as Error).message };
  }

  const entries: Array<{ job: string; build: Build }> = [];
  for (const job of config.jobs) {
    const status: CiJobState = statuses[job] ?? {
      baselineBuildNumber: null,
      lastSeenBuildNumber: null,
      omittedBuildCount: 0,
      paused: false,
      error: null,
    };
    statuses[job] = status;
    if (status.paused) continue;
    try {
      const res = await httpRequest(
        {
          method: 'GET',
          url: `${base}${jobPath(job)}/api/json`,
          query: { tree: 'builds[number,result,url,timestamp]' },
          headers,
          timeoutMs: deps.timeoutMs ?? 15_000,
        },
        { allowPrivateNetworks: deps.allowPrivateNetworks, sensitiveHeaders: ['authorization'] },
      );
      if (res.status < 200 || res.status >= 300) throw new Error(`The CI server answered HTTP ${res.status} for job "${job}".`);
      const raw = (res.body as { builds?: unknown })?.builds;
      if (!Array.isArray(raw)) throw new Error(`The CI server's answer for job "${job}" has no builds list.`);
      const builds: Build[] = raw
        .filter(
          (b): b is Record<string, unknown> =>
            typeof b === 'object' && b !== null && Number.isInteger((b as Record<string, unknown>).number),
        )
        .map((b) => ({
          number: Number(b.number),
          result: typeof b.result === 'string' ? b.result : null,
          url: typeof b.url === 'string' ? b.url : null,
          timestamp: typeof b.timestamp === 'number' ? b.timestamp : null,
        }))
        .sort((a, b) => a.number - b.number);
      status.error = null;
      const newest = builds.at(-1)?.number ?? 0;
      if (status.lastSeenBuildNumber === null) {
        status.baselineBuildNumber = newest;
        status.lastSeenBuildNumber = newest;
        continue;
      }
      const newer = builds.filter((b) => b.number > status.lastSeenBuildNumber!);
      const firstRunning = newer.find((b) => b.result === null);
      let done = firstRunning ? newer.filter((b) => b.number < firstRunning.number) : newer;
      const lastSeen = done.at(-1)?.number;
      if (lastSeen === undefined) continue;
      if (done.length > CI_MAX_BUILDS_PER_POLL) {
        status.omittedBuildCount += done.length - CI_MAX_BUILDS_PER_POLL;
        done = done.slice(-CI_MAX_BUILDS_PER_POLL);
      }
      for (const build of done) if (!config.results || config.results.includes(build.result!)) entries.push({ job, build });
      status.lastSeenBuildNumber = lastSeen;
    } catch (err) {
      status.error = (err as Error).message.slice(0, 500);
    }
  }
  const webhookId = entries.length > 0 ? await sourceWebhookId(em, source, 'ci', config.nodeId) : null;
  let started = 0;
  await em.transactional(async (tx) => {
    for (const { job, build } of entries) {
      const payload = {
        ci: { sourceId: source.id, job, build: { number: build.number, result: build.result, url: build.url, timestamp: build.timestamp } },
      };
      if (await enqueueSourceEvent(tx, source, webhookId!, payload, `ci:${job}:${build.number}`)) started++;
    }
    const firstError = Object.values(statuses).find((s) => s.error)?.error ?? null;
    await save(tx, firstError);
  });
  return { outcome: 'polled', started };
}
