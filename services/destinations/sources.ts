import type { EntityManager } from '@mikro-orm/postgresql';
import {
  TargetSourceSchema,
  WorkflowVersionSchema,
  type CiSourceConfig,
  type RssSourceConfig,
  type TargetSource,
  type Workflow,
  type WorkflowTarget,
} from '../../db/entities';
import type { GraphNode } from '../../engine/types';
import { conflict, invalidInput } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { credentialBelongsToWorkspace } from './credentials';

/**
 * configure-source: RSS feeds and CI sources of a destination are stored and listed here; the
 * event-sources area polls them (as the destination's active version, stopping with it).
 */

export const RSS_INTERVAL = { min: 60, max: 86_400, default: 300 } as const;
export const CI_INTERVAL = { min: 60, max: 86_400, default: 60 } as const;
export const CI_MAX_JOBS = 50;

export type SourceInput =
  | { kind: 'rss'; targetId: string; feedUrl: string; intervalSeconds?: number }
  | { kind: 'ci'; targetId: string; nodeId: string; credentialId: string; jobs: string[]; results?: string[]; intervalSeconds?: number };

const TRIGGER_NOT_FOUND = 'event_source_trigger_not_found';

/**
 * The contract's rule for event sources that start a run with their event as input (an RSS
 * feed, a mail route): the version they run must have an enabled Start or plain Webhook
 * trigger, else 400 `event_source_trigger_not_found`. `source` names the source in the message
 * ("An RSS source"), `where` the version checked.
 */
export function requireEventSourceTrigger(nodes: readonly GraphNode[], source: string, where: string): void {
  if (nodes.some((n) => (n.type === 'start' || n.type === 'webhook') && !n.disabled)) return;
  throw invalidInput(`${source} needs a Start or plain Webhook trigger in ${where}.`, { code: TRIGGER_NOT_FOUND });
}

/**
 * Stores (or replaces) a source of `target`, checked against the destination's saved version
 * (its candidate): an RSS feed needs a Start or plain Webhook trigger there, a CI source names
 * a `ci` trigger node of it and a credential of the workspace, and is refused when the
 * version would itself start a job the source watches. The caller holds the workflow lock,
 * checked the revision, and bumps it.
 */
export async function configureSource(
  tx: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  target: WorkflowTarget,
  input: SourceInput,
): Promise<TargetSource> {
  const saved = target.candidateVersionId ? await tx.findOne(WorkflowVersionSchema, { id: target.candidateVersionId }) : null;
  const nodes: GraphNode[] = saved?.nodes ?? [];
  let key: string;
  let config: RssSourceConfig | CiSourceConfig;
  if (input.kind === 'rss') {
    requireEventSourceTrigger(nodes, 'An RSS source', `the saved version of destination "${target.name}"`);
    key = input.feedUrl;
    config = { feedUrl: input.feedUrl, intervalSeconds: input.intervalSeconds ?? RSS_INTERVAL.default };
  } else {
    const node = nodes.find((n) => n.id === input.nodeId);
    if (!node || node.type !== 'ci') {
      throw invalidInput(`Node "${input.nodeId}" is not a CI trigger in the saved version of destination "${target.name}".`, {
        code: TRIGGER_NOT_FOUND,
      });
    }
    if (!(await credentialBelongsToWorkspace(tx, wf.workspaceId, input.credentialId))) {
      throw invalidInput(`Credential "${input.credentialId}" is not a credential of this workspace.`);
    }
    const jobs = [...new Set(input.jobs)];
    const started = jobs.filter((job) => startsJob(nodes, job));
    if (started.length > 0) {
      throw conflict(
        `The workflow would start job(s) ${started.map((j) => `"${j}"`).join(', ')} that this CI source watches, and so trigger itself.`,
        { code: 'event_source_loop' },
      );
    }
    key = input.nodeId;
    config = {
      nodeId: input.nodeId,
      credentialId: input.credentialId,
      jobs,
      results: input.results && input.results.length > 0 ? [...new Set(input.results)] : null,
      intervalSeconds: input.intervalSeconds ?? CI_INTERVAL.default,
      userId: principal.userId,
    };
  }
  const now = new Date();
  const existing = await tx.findOne(TargetSourceSchema, { targetId: target.id, kind: input.kind, sourceKey: key });
  if (existing) {
    existing.config = config;
    if (input.kind === 'ci' && existing.state.jobStatuses) {
      const watched = new Set((config as CiSourceConfig).jobs);
      existing.state = {
        ...existing.state,
        jobStatuses: Object.fromEntries(Object.entries(existing.state.jobStatuses).filter(([job]) => watched.has(job))),
      };
    }
    existing.updatedAt = now;
    return existing;
  }
  return tx.create(TargetSourceSchema, {
    id: newId('src'),
    workspaceId: wf.workspaceId,
    workflowId: wf.id,
    targetId: target.id,
    kind: input.kind,
    sourceKey: key,
    config,
    state: {},
    createdById: principal.userId,
    createdAt: now,
    updatedAt: now,
  });
}

/**
 * Whether the graph would start `job` on a CI server: an http node calling the job's build
 * endpoint (`/job/<name>/build` or `/buildWithParameters`, the Jenkins-style API the CI sources
 * poll). Expression URLs cannot be known before they run and are not counted.
 */
function startsJob(nodes: GraphNode[], job: string): boolean {
  const segment = `/job/${encodeURIComponent(job).replace(/%2F/gi, '/job/')}/`;
  return nodes.some((n) => {
    if (n.type !== 'http' || n.disabled) return false;
    const url = n.config?.url;
    if (typeof url !== 'string' || url.startsWith('=')) return false;
    let path: string;
    try {
      path = new URL(url).pathname;
    } catch {
      return false;
    }
    return path.includes(segment) && /\/(build|buildWithParameters)\/?$/.test(path);
  });
}
