import type { EntityManager } from '@mikro-orm/postgresql';
import { exec } from './store';
import {
  TargetActivationSchema,
  TargetSourceSchema,
  WebhookSchema,
  WorkflowSchema,
  WorkflowTargetSchema,
  WorkflowVersionSchema,
  type CiSourceConfig,
  type RssSourceConfig,
  type TargetActivation,
  type TargetSource,
  type Workflow,
  type WorkflowTarget,
  type WorkflowVersion,
} from '../../db/entities';
import { conflict, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';

/**
 * The destinations model: one Production destination per workflow (created when first needed)
 * and named previews, their views, and the lock every change takes. Every change to the
 * destinations of a workflow locks the workflow row first, so changes (and the legacy deploy,
 * which locks it too) are serialized per workflow and a stale `expectedRevision` is detected
 * under the lock.
 */

export const WORKFLOW_NOT_FOUND = 'Workflow not found';
export const DESTINATION_NOT_FOUND = 'Destination not found';
export const VERSION_NOT_FOUND = 'Version not found';
export const ACTIVATION_NOT_FOUND = 'Activation not found';
export const PRODUCTION_NAME = 'Production';
/** `GET /targets?includeHistory=true` shows this many production activations. */
export const HISTORY_LIMIT = 30;

export { exec } from './store';

/**
 * A workflow of the principal's workspace. Destination routes answer 404 for workflows of
 * other workspaces too, so their ids reveal nothing.
 */
export async function loadScopedWorkflow(em: EntityManager, principal: WorkspacePrincipal, workflowId: string): Promise<Workflow> {
  const wf = await em.findOne(WorkflowSchema, { id: workflowId, workspaceId: principal.workspaceId });
  if (!wf) throw notFound(WORKFLOW_NOT_FOUND);
  return wf;
}

/**
 * The Production destination of a workflow, created on first use from what the workflow has:
 * its deployed version as candidate and active pointer.
 */
export async function ensureProductionTarget(
  em: EntityManager,
  wf: Pick<Workflow, 'id' | 'workspaceId' | 'status' | 'activeVersionId' | 'createdById'>,
): Promise<WorkflowTarget> {
  const existing = await em.findOne(WorkflowTargetSchema, { workflowId: wf.id, kind: 'production' });
  if (existing) return existing;
  const now = new Date();
  await exec(
    em,
    `insert into workflow_targets (id, workspace_id, workflow_id, kind, name, revision, enabled, candidate_version_id, active_version_id, generation, connection_bindings, child_dependencies, created_by_id, created_at, updated_at)
     values (?, ?, ?, 'production', ?, 1, ?, ?, ?, 0, '{}', '{}', ?, ?, ?)
     on conflict (workflow_id) where kind = 'production' do nothing`,
    [
      newId('tgt'),
      wf.workspaceId,
      wf.id,
      PRODUCTION_NAME,
      wf.status === 'deployed' && wf.activeVersionId !== null,
      wf.activeVersionId,
      wf.activeVersionId,
      wf.createdById,
      now,
      now,
    ],
  );
  return em.findOneOrFail(WorkflowTargetSchema, { workflowId: wf.id, kind: 'production' }, { refresh: true });
}

/**
 * Runs `fn` in a transaction holding the workflow row's lock, with the workflow re-read
 * under it. The Production destination exists by then.
 */
export async function withLockedWorkflow<T>(
  em: EntityManager,
  workflowId: string,
  fn: (tx: EntityManager, wf: Workflow, production: WorkflowTarget) => Promise<T>,
): Promise<T> {
  return em.transactional(async (tx) => {
    await exec(tx, 'select id from workflows where id = ? for update', [workflowId]);
    const wf = await tx.findOneOrFail(WorkflowSchema, { id: workflowId }, { refresh: true });
    const production = await ensureProductionTarget(tx, wf);
    return fn(tx, wf, production);
  });
}

export function revisionConflict(target: WorkflowTarget, expectedRevision: number) {
  return conflict(
    `Destination "${target.name}" is at revision ${target.revision}, not ${expectedRevision}: it changed since it was read. Fetch the destinations and retry with the current revision.`,
    { code: 'workflow_target_revision_conflict', details: { targetId: target.id, revision: target.revision, expectedRevision } },
  );
}

/** A destination of the (locked) workflow at the expected revision: 404 when it is not one of its destinations, 409 when stale. */
export async function lockedTarget(tx: EntityManager, wf: Workflow, targetId: string, expectedRevision: number): Promise<WorkflowTarget> {
  const target = await tx.findOne(WorkflowTargetSchema, { id: targetId, workflowId: wf.id }, { refresh: true });
  if (!target) throw notFound(DESTINATION_NOT_FOUND);
  if (target.revision !== expectedRevision) throw revisionConflict(target, expectedRevision);
  return target;
}

/** Records that a destination changed: its revision moves on. */
export function touch(target: WorkflowTarget): void {
  target.revision += 1;
  target.updatedAt = new Date();
}

/** A version of the workflow; 404 for versions of other workflows (and workspaces). */
export async function versionOf(em: EntityManager, wf: Pick<Workflow, 'id'>, versionId: string): Promise<WorkflowVersion> {
  const version = await em.findOne(WorkflowVersionSchema, { id: versionId, workflowId: wf.id });
  if (!version) throw notFound(VERSION_NOT_FOUND);
  return version;
}

// --- Views ------------------------------------------------------------------------------------

export interface RssSourceView {
  id: string;
  kind: 'rss';
  targetId: string;
  feedUrl: string;
  intervalSeconds: number;
  lastPolledAt: string | null;
  paused: boolean;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CiJobStatusView {
  baselineBuildNumber: number | null;
  lastSeenBuildNumber: number | null;
  omittedBuildCount: number;
  paused: boolean;
  error: string | null;
}

export interface CiSourceView {
  id: string;
  kind: 'ci';
  targetId: string;
  nodeId: string;
  credentialId: string;
  jobs: string[];
  results: string[] | null;
  intervalSeconds: number;
  lastPolledAt: string | null;
  paused: boolean;
  error: string | null;
  jobStatuses: Record<string, CiJobStatusView>;
  createdAt: Date;
  updatedAt: Date;
}

export interface ErrtrackerEndpointView {
  webhookId: string;
  nodeId: string;
  /** Accepting deliveries now: the destination is published (and approved, for previews) with the selected connection. */
  live: boolean;
}

export interface SourceOverlapView {
  kind: 'rss' | 'ci';
  /** The feed URL, or the CI job name. */
  key: string;
  sourceId: string;
  otherTargetIds: string[];
}

export interface TargetView {
  targetId: string;
  workflowId: string;
  kind: 'production' | 'preview';
  name: string;
  revision: number;
  enabled: boolean;
  candidateVersionId: string | null;
  candidateVersion: number | null;
  activeVersionId: string | null;
  activeVersion: number | null;
  activeActivationId: string | null;
  generation: number;
  /** The active version was published under a session approval (execute rule 2). */
  approved: boolean;
  connections: { bindings: Record<string, string>; childDependencies: Record<string, string>; allowProductionReactivation: boolean };
  prepared: {
    kind: 'promotion' | 'rollback';
    preparedPublicationVersionId: string;
    version: number | null;
    sourceTargetId: string | null;
    sourceActivationId: string | null;
    restoreActivationId: string | null;
    stopAfter: boolean | null;
    preparedAt: string;
  } | null;
  sources: {
    rss: RssSourceView[];
    ci: CiSourceView[];
    mailRoutes: never[];
    errtracker: ErrtrackerEndpointView[];
    overlaps: SourceOverlapView[];
  };
  createdAt: Date;
  updatedAt: Date;
}

export interface HistoryEntry {
  activationId: string;
  targetId: string;
  versionId: string;
  version: number;
  displayLabel: string | null;
  createdAt: Date;
  canPrepareRollback: boolean;
}

/** Whether a destination runs its active version now (enabled, with an active version). */
export const isLive = (t: WorkflowTarget) => t.enabled && t.activeVersionId !== null && t.activeActivationId !== null;

/** Views of destinations of one workflow, with their versions, approvals, sources and error-tracker endpoints. */
export async function targetViews(em: EntityManager, wf: Workflow, targets: WorkflowTarget[]): Promise<TargetView[]> {
  if (targets.length === 0) return [];
  const versionIds = new Set<string>();
  for (const t of targets) {
    for (const id of [t.candidateVersionId, t.activeVersionId, t.prepared?.versionId]) if (id) versionIds.add(id);
  }
  const activationIds = targets.map((t) => t.activeActivationId).filter((id): id is string => id !== null);
  const [versions, activations, sources, endpoints] = await Promise.all([
    versionIds.size > 0 ? em.find(WorkflowVersionSchema, { id: { $in: [...versionIds] } }) : Promise.resolve([]),
    activationIds.length > 0 ? em.find(TargetActivationSchema, { id: { $in: activationIds } }) : Promise.resolve([]),
    em.find(TargetSourceSchema, { workflowId: wf.id }, { orderBy: { createdAt: 'asc', id: 'asc' } }),
    em.find(WebhookSchema, { workflowId: wf.id, kind: 'errtracker' }, { orderBy: { createdAt: 'asc' } }),
  ]);
  const numberOf = new Map(versions.map((v) => [v.id, v.version]));
  const activationById = new Map(activations.map((a) => [a.id, a]));
  const production = targets.find((t) => t.kind === 'production');
  return targets.map((t) => {
    const activation = t.activeActivationId ? activationById.get(t.activeActivationId) : undefined;
    const own = sources.filter((s) => s.targetId === t.id);
    return {
      targetId: t.id,
      workflowId: t.workflowId,
      kind: t.kind,
      name: t.name,
      revision: t.revision,
      enabled: t.enabled,
      candidateVersionId: t.candidateVersionId,
      candidateVersion: t.candidateVersionId ? (numberOf.get(t.candidateVersionId) ?? null) : null,
      activeVersionId: t.activeVersionId,
      activeVersion: t.activeVersionId ? (numberOf.get(t.activeVersionId) ?? null) : null,
      activeActivationId: t.activeActivationId,
      generation: t.generation,
      approved: Boolean(activation?.approvalId),
      connections: {
        bindings: t.connectionBindings,
        childDependencies: t.childDependencies,
        allowProductionReactivation: t.allowProductionReactivation,
      },
      prepared: t.prepared
        ? {
            kind: t.prepared.kind,
            preparedPublicationVersionId: t.prepared.versionId,
            version: numberOf.get(t.prepared.versionId) ?? null,
            sourceTargetId: t.prepared.kind === 'promotion' ? t.prepared.sourceTargetId : null,
            sourceActivationId: t.prepared.kind === 'promotion' ? t.prepared.sourceActivationId : null,
            restoreActivationId: t.prepared.kind === 'rollback' ? t.prepared.restoreActivationId : null,
            stopAfter: t.prepared.kind === 'promotion' ? t.prepared.stopAfter : null,
            preparedAt: t.prepared.preparedAt,
          }
        : null,
      sources: {
        rss: own.filter((s) => s.kind === 'rss').map((s) => rssView(s, t)),
        ci: own.filter((s) => s.kind === 'ci').map((s) => ciView(s, t)),
        mailRoutes: [],
        errtracker: endpoints
          .filter((w) => (w.targetId ?? production?.id) === t.id)
          .map((w) => ({
            webhookId: w.id,
            nodeId: w.nodeId,
            live:
              w.enabled &&
              isLive(t) &&
              (t.kind === 'production' ? wf.status === 'deployed' && !wf.trashed : Boolean(activation?.approvalId)) &&
              connectionSelected(w.config.credentialId, activation),
          })),
        overlaps: overlapsOf(own, sources),
      },
      createdAt: t.createdAt,
      updatedAt: t.updatedAt,
    };
  });
}

/** An endpoint that names a connection is live only when its destination was published with that credential bound. */
export function connectionSelected(
  credentialId: string | undefined,
  activation: Pick<TargetActivation, 'connectionBindings'> | undefined | null,
): boolean {
  if (!credentialId) return true;
  return Boolean(activation && Object.values(activation.connectionBindings).includes(credentialId));
}

/** How an RSS or CI source polls: every `intervalSeconds`, paused by itself or while its destination is not live. */
function pollingView(s: TargetSource, t: WorkflowTarget, intervalSeconds: number) {
  return {
    intervalSeconds,
    lastPolledAt: s.state.lastPolledAt ?? null,
    paused: Boolean(s.state.paused) || !isLive(t),
    error: s.state.error ?? null,
  };
}

function rssView(s: TargetSource, t: WorkflowTarget): RssSourceView {
  const config = s.config as RssSourceConfig;
  return {
    id: s.id,
    kind: 'rss',
    targetId: s.targetId,
    feedUrl: config.feedUrl,
    ...pollingView(s, t, config.intervalSeconds),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

function ciView(s: TargetSource, t: WorkflowTarget): CiSourceView {
  const config = s.config as CiSourceConfig;
  const statuses = s.state.jobStatuses ?? {};
  return {
    id: s.id,
    kind: 'ci',
    targetId: s.targetId,
    nodeId: config.nodeId,
    credentialId: config.credentialId,
    jobs: config.jobs,
    results: config.results,
    ...pollingView(s, t, config.intervalSeconds),
    jobStatuses: Object.fromEntries(
      config.jobs.map((job) => {
        const st = statuses[job];
        return [
          job,
          {
            baselineBuildNumber: st?.baselineBuildNumber ?? null,
            lastSeenBuildNumber: st?.lastSeenBuildNumber ?? null,
            omittedBuildCount: st?.omittedBuildCount ?? 0,
            paused: st?.paused ?? false,
            error: st?.error ?? null,
          },
        ];
      }),
    ),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** Keys a source watches: its feed URL, or each CI job on its credential's server. */
function sourceKeys(s: TargetSource): Array<{ kind: 'rss' | 'ci'; key: string; match: string }> {
  if (s.kind === 'rss') {
    const url = (s.config as RssSourceConfig).feedUrl;
    return [{ kind: 'rss', key: url, match: url }];
  }
  const config = s.config as CiSourceConfig;
  return config.jobs.map((job) => ({ kind: 'ci' as const, key: job, match: `${config.credentialId}\0${job}` }));
}

/** The same feed, or the same CI job on the same server, watched by other destinations of the workflow. */
function overlapsOf(own: TargetSource[], all: TargetSource[]): SourceOverlapView[] {
  const overlaps: SourceOverlapView[] = [];
  for (const s of own) {
    for (const k of sourceKeys(s)) {
      const others = all
        .filter((o) => o.targetId !== s.targetId && o.kind === s.kind && sourceKeys(o).some((ok) => ok.match === k.match))
        .map((o) => o.targetId);
      if (others.length > 0) overlaps.push({ kind: k.kind, key: k.key, sourceId: s.id, otherTargetIds: [...new Set(others)] });
    }
  }
  return overlaps;
}

/** The latest production activations, newest first, with their version numbers and labels. */
export async function productionHistory(em: EntityManager, production: WorkflowTarget): Promise<HistoryEntry[]> {
  const rows = await exec<
    Array<{ id: string; target_id: string; version_id: string; version: number; display_label: string | null; created_at: Date }>
  >(
    em,
    `select a.id, a.target_id, a.version_id, v.version, v.display_label, a.created_at
       from workflow_target_activations a join workflow_versions v on v.id = a.version_id
      where a.target_id = ?
      order by a.generation desc
      limit ?`,
    [production.id, HISTORY_LIMIT],
  );
  return rows.map((r) => ({
    activationId: r.id,
    targetId: r.target_id,
    versionId: r.version_id,
    version: r.version,
    displayLabel: r.display_label,
    createdAt: new Date(r.created_at),
    canPrepareRollback: r.id !== production.activeActivationId,
  }));
}

/** Destinations of a workflow: Production first, then previews in creation order. */
export async function targetsOf(em: EntityManager, wf: Workflow): Promise<WorkflowTarget[]> {
  const targets = await em.find(WorkflowTargetSchema, { workflowId: wf.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return [...targets.filter((t) => t.kind === 'production'), ...targets.filter((t) => t.kind !== 'production')];
}

/** GET /workflows/{id}/targets: every destination of a workflow of the workspace, optionally with the production history. */
export async function listTargets(
  em: EntityManager,
  principal: WorkspacePrincipal,
  workflowId: string,
  opts: { includeHistory?: boolean } = {},
) {
  const wf = await loadScopedWorkflow(em, principal, workflowId);
  const production = await ensureProductionTarget(em, wf);
  const targets = await targetViews(em, wf, await targetsOf(em, wf));
  return { workflowId: wf.id, targets, ...(opts.includeHistory ? { history: await productionHistory(em, production) } : {}) };
}

/** One destination's view, read afresh. */
export async function targetView(em: EntityManager, wf: Workflow, targetId: string): Promise<TargetView> {
  const target = await em.findOneOrFail(WorkflowTargetSchema, { id: targetId }, { refresh: true });
  // targetViews gives one view per target.
  return (await targetViews(em, wf, [target])).at(0)!;
}
