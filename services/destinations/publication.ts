import type { EntityManager } from '@mikro-orm/postgresql';
import {
  TargetActivationSchema,
  TargetApprovalSchema,
  TargetSourceSchema,
  WorkflowSchema,
  WorkflowTargetSchema,
  WorkflowVersionSchema,
  type TargetActivation,
  type TargetApproval,
  type Workflow,
  type WorkflowTarget,
  type WorkflowVersion,
} from '../../db/entities';
import { DomainError, type ErrorKind } from '../kernel/errors';
import { validateWorkflowGraph } from '../workflows/graph';
import { credentialBelongsToWorkspace } from './credentials';
import { isLive } from './model';

/**
 * What a publication checks, shared by `publish` (which refuses on the first failed check) and
 * the read-only `preview-publication` report: the revision, which version is being published
 * (the candidate, a prepared promotion or rollback, or the resumption of a stopped activation),
 * the workflow's state, validation, the session approval (API calls cannot grant one; a
 * rollback needs one that permits reactivation), repository evidence, connections,
 * dependencies, CI sources, the request id and SECRET_KEY for webhook triggers.
 */

/** The publish fields of a change (`publish` action, or preview-publication without `action`). */
export interface PublishFields {
  targetId: string;
  expectedRevision: number;
  versionId: string;
  /** UUID naming this publication; reusing it for another publication is refused. */
  requestId: string;
  /** The prepared source of a promotion (as prepared with prepare-promotion). */
  sourceTargetId?: string;
  sourceActivationId?: string;
  /** The historical activation a prepared rollback restores. */
  restoreActivationId?: string;
  /** The stopped activation to resume. */
  resumeActivationId?: string;
}

export type PublicationMode = 'candidate' | 'promotion' | 'rollback' | 'resume';

export const CHECK_NAMES = [
  'revision',
  'version',
  'workflow',
  'validation',
  'approval',
  'repository',
  'connections',
  'dependencies',
  'sources',
  'requestId',
  'secretKey',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface PublicationCheck {
  name: CheckName;
  ok: boolean;
  message: string;
  /** The error code `publish` answers with when this check fails. */
  code?: string;
}

interface FailedCheck extends PublicationCheck {
  kind: ErrorKind;
  details?: Record<string, unknown>;
}

export interface ConnectionReport {
  /** The alias nodes use (null for a node naming a credential id directly). */
  alias: string | null;
  /** A reference only; never a secret value. */
  credentialId: string | null;
  nodeIds: string[];
  status: 'bound' | 'unbound' | 'credential_missing';
}

export interface DependencyReport {
  nodeId: string;
  workflowId: string;
  targetId: string | null;
  ready: boolean;
  reason: string | null;
}

export interface PublicationAssessment {
  ready: boolean;
  checks: PublicationCheck[];
  warnings: string[];
  connections: ConnectionReport[];
  dependencies: DependencyReport[];
  mode: PublicationMode;
  version: WorkflowVersion | null;
  approval: TargetApproval | null;
  /** The stopped activation a resumption re-enables. */
  resumed: TargetActivation | null;
  /** The first failed check as the error publish answers with. */
  failure: DomainError | null;
}

/** Assesses publishing `fields` on `target` (of the workflow `wf`); writes nothing. */
export async function assessPublication(
  em: EntityManager,
  wf: Workflow,
  target: WorkflowTarget,
  fields: PublishFields,
  opts: { secretKey: string | undefined },
): Promise<PublicationAssessment> {
  const checks: Array<PublicationCheck | FailedCheck> = [];
  const warnings: string[] = [];
  const pass = (name: CheckName, message: string) => checks.push({ name, ok: true, message });
  const fail = (name: CheckName, kind: ErrorKind, message: string, code?: string, details?: Record<string, unknown>) =>
    checks.push({ name, ok: false, message, kind, ...(code ? { code } : {}), ...(details ? { details } : {}) });

  if (target.revision === fields.expectedRevision) pass('revision', `Destination "${target.name}" is at revision ${target.revision}.`);
  else
    fail(
      'revision',
      'conflict',
      `Destination "${target.name}" is at revision ${target.revision}, not ${fields.expectedRevision}.`,
      'workflow_target_revision_conflict',
      { targetId: target.id, revision: target.revision },
    );

  // Which version this publication may publish.
  const { mode, expectedVersionId, problem, resumed } = await publicationMode(em, target, fields);
  const version = await em.findOne(WorkflowVersionSchema, { id: fields.versionId, workflowId: wf.id });
  if (problem) fail('version', problem.kind, problem.message, problem.code);
  else if (!version) fail('version', 'not_found', 'Version not found');
  else if (version.id !== expectedVersionId) {
    const what = mode === 'candidate' ? `the candidate of destination "${target.name}"` : `the version this ${mode} publishes`;
    fail(
      'version',
      'conflict',
      `versionId is not ${what} (${expectedVersionId ?? 'none'}); fetch the destinations and retry.`,
      'workflow_candidate_changed',
      { expectedVersionId },
    );
  } else pass('version', `Publishes version ${version.version} (${mode}).`);

  if (wf.trashed) fail('workflow', 'invalid', 'A trashed workflow cannot be published; restore it first.');
  else if (wf.status === 'disabled') fail('workflow', 'invalid', 'The workflow is disabled; enable it before publishing.');
  else pass('workflow', 'The workflow may run.');

  let approval: TargetApproval | null = null;
  if (version) {
    const validation = validateWorkflowGraph({ nodes: version.nodes, edges: version.edges });
    if (validation.report.valid) pass('validation', `Version ${version.version} is valid.`);
    else fail('validation', 'invalid', 'The version is not ready to publish.', undefined, { ...validation });

    approval = await approvalFor(em, target, version, mode, resumed);
    if (approval)
      pass('approval', `Approved by ${approval.approvedById}${approval.permitsReactivation ? ' (reactivation permitted)' : ''}.`);
    else {
      const message =
        mode === 'rollback'
          ? `A production rollback needs an approval of version ${version.version} that permits reactivation of that snapshot; an Admin or Owner grants it with a session.`
          : mode === 'resume'
            ? 'The stopped activation was not published under an approval; publish an approved version instead.'
            : `Version ${version.version} of destination "${target.name}" has no approval: an Admin or Owner must approve it with a session (API calls cannot grant approval).`;
      fail('approval', 'conflict', message, 'workflow_target_approval_required');
    }
  } else {
    fail('validation', 'not_found', 'No version to validate.');
    fail('approval', 'conflict', 'No version to approve.', 'workflow_target_approval_required');
  }

  pass('repository', 'No repository is configured for this workflow, so no review evidence is required.');
  warnings.push('No repository is configured for this workflow: the publication carries no review evidence.');

  const connections = version ? await connectionReport(em, wf, target, version) : [];
  const badConnections = connections.filter((c) => c.status !== 'bound');
  if (badConnections.length === 0) pass('connections', `${connections.length} connection(s) bound.`);
  else {
    const describe = (c: ConnectionReport) =>
      c.status === 'unbound' ? `alias "${c.alias}" is not bound` : `credential "${c.credentialId}" is not a credential of this workspace`;
    fail(
      'connections',
      'conflict',
      `Connections are not ready: ${badConnections.map(describe).join('; ')}. Bind them with save-connections.`,
      'SETUP_REQUIRED',
    );
  }

  const dependencies = version ? await dependencyReport(em, wf, target, version) : [];
  const notReady = dependencies.filter((d) => !d.ready);
  if (notReady.length === 0) pass('dependencies', `${dependencies.length} dependenc${dependencies.length === 1 ? 'y' : 'ies'} ready.`);
  else
    fail(
      'dependencies',
      'conflict',
      `Dependencies are not ready: ${notReady.map((d) => `node "${d.nodeId}": ${d.reason}`).join('; ')}.`,
      'workflow_target_dependency_unavailable',
    );
  for (const childId of Object.keys(target.childDependencies)) {
    if (!dependencies.some((d) => d.workflowId === childId)) warnings.push(`Child dependency "${childId}" is not used by this version.`);
  }

  if (version) {
    const ciNodes = version.nodes.filter((n) => n.type === 'ci' && !n.disabled);
    const sources = ciNodes.length > 0 ? await em.find(TargetSourceSchema, { targetId: target.id, kind: 'ci' }) : [];
    const missing = ciNodes.filter((n) => !sources.some((s) => s.sourceKey === n.id));
    if (missing.length === 0) pass('sources', ciNodes.length > 0 ? 'Every CI trigger has its source.' : 'No CI triggers.');
    else
      fail(
        'sources',
        'conflict',
        `CI trigger(s) ${missing.map((n) => `"${n.id}"`).join(', ')} have no CI source on this destination; configure one with configure-source before publishing.`,
        'event_source_required',
      );
  } else pass('sources', 'No version.');

  const reused = await em.findOne(TargetActivationSchema, { workspaceId: wf.workspaceId, requestId: fields.requestId });
  if (reused)
    fail('requestId', 'conflict', `requestId ${fields.requestId} already named publication ${reused.id}; send a new UUID.`, 'conflict');
  else pass('requestId', 'requestId is new.');

  const needsKey = Boolean(version?.nodes.some((n) => n.type === 'webhook'));
  if (needsKey && !opts.secretKey) fail('secretKey', 'unavailable', 'SECRET_KEY is not configured: webhook URLs cannot be provisioned.');
  else pass('secretKey', needsKey ? 'Webhook URLs can be provisioned.' : 'No webhook triggers.');

  const firstFailure = checks.find((c): c is FailedCheck => !c.ok);
  return {
    ready: !firstFailure,
    checks: checks.map(({ name, ok, message, code }) => ({ name, ok, message, ...(code ? { code } : {}) })),
    warnings,
    connections,
    dependencies,
    mode,
    version,
    approval,
    resumed,
    failure: firstFailure
      ? new DomainError(firstFailure.kind, firstFailure.message, { code: firstFailure.code, details: firstFailure.details })
      : null,
  };
}

interface ModeChoice {
  mode: PublicationMode;
  expectedVersionId: string | null;
  problem?: { kind: ErrorKind; message: string; code?: string };
  resumed: TargetActivation | null;
}

/** A publication in `mode` that nothing prepared or allows: a conflict, and no version to expect. */
function notPrepared(mode: PublicationMode, message: string): ModeChoice {
  return { mode, expectedVersionId: null, resumed: null, problem: { kind: 'conflict', message } };
}

async function publicationMode(em: EntityManager, target: WorkflowTarget, f: PublishFields): Promise<ModeChoice> {
  const prepared = target.prepared;
  if (f.sourceActivationId !== undefined || f.sourceTargetId !== undefined) {
    const matches =
      prepared?.kind === 'promotion' &&
      (f.sourceActivationId === undefined || prepared.sourceActivationId === f.sourceActivationId) &&
      (f.sourceTargetId === undefined || prepared.sourceTargetId === f.sourceTargetId);
    if (!matches)
      return notPrepared(
        'promotion',
        `No promotion of that source is prepared on destination "${target.name}"; prepare it with prepare-promotion.`,
      );
    return { mode: 'promotion', expectedVersionId: prepared.versionId, resumed: null };
  }
  if (f.restoreActivationId !== undefined) {
    if (prepared?.kind !== 'rollback' || prepared.restoreActivationId !== f.restoreActivationId)
      return notPrepared(
        'rollback',
        `No rollback to that activation is prepared on destination "${target.name}"; prepare it with prepare-rollback.`,
      );
    return { mode: 'rollback', expectedVersionId: prepared.versionId, resumed: null };
  }
  if (f.resumeActivationId !== undefined) {
    if (f.resumeActivationId !== target.activeActivationId || target.enabled)
      return notPrepared('resume', `Activation ${f.resumeActivationId} is not the stopped activation of destination "${target.name}".`);
    const resumed = await em.findOne(TargetActivationSchema, { id: f.resumeActivationId, targetId: target.id });
    return { mode: 'resume', expectedVersionId: resumed?.versionId ?? null, resumed };
  }
  if (!target.candidateVersionId) return notPrepared('candidate', `Destination "${target.name}" has no candidate version; save one first.`);
  return { mode: 'candidate', expectedVersionId: target.candidateVersionId, resumed: null };
}

/**
 * The approval a publication uses: the resumed activation's own; for a rollback only one that
 * permits reactivation; otherwise the newest approval of that exact version not yet used by a
 * publication, or one that permits reactivation (reusable).
 */
async function approvalFor(
  em: EntityManager,
  target: WorkflowTarget,
  version: WorkflowVersion,
  mode: PublicationMode,
  resumed: TargetActivation | null,
): Promise<TargetApproval | null> {
  if (mode === 'resume') return resumed?.approvalId ? await em.findOne(TargetApprovalSchema, { id: resumed.approvalId }) : null;
  const approvals = await em.find(
    TargetApprovalSchema,
    { targetId: target.id, versionId: version.id },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  if (mode === 'rollback') return approvals.find((a) => a.permitsReactivation) ?? null;
  return (
    approvals.find((a) => !a.permitsReactivation && a.consumedByActivationId === null) ??
    approvals.find((a) => a.permitsReactivation) ??
    null
  );
}

/**
 * Connections a version uses: http nodes name a credential through `credentialId`, which is
 * either an alias bound on the destination or a credential id of the workspace. Every binding
 * must still name a credential of the workspace.
 */
async function connectionReport(
  em: EntityManager,
  wf: Workflow,
  target: WorkflowTarget,
  version: WorkflowVersion,
): Promise<ConnectionReport[]> {
  const byRef = new Map<string, string[]>();
  for (const node of version.nodes) {
    const ref = node.config?.credentialId;
    if (typeof ref === 'string' && ref !== '') byRef.set(ref, [...(byRef.get(ref) ?? []), node.id]);
  }
  const report: ConnectionReport[] = [];
  for (const [alias, credentialId] of Object.entries(target.connectionBindings)) {
    const exists = await credentialBelongsToWorkspace(em, wf.workspaceId, credentialId);
    report.push({ alias, credentialId, nodeIds: byRef.get(alias) ?? [], status: exists ? 'bound' : 'credential_missing' });
  }
  for (const [ref, nodeIds] of byRef) {
    if (ref in target.connectionBindings) continue;
    const exists = await credentialBelongsToWorkspace(em, wf.workspaceId, ref);
    report.push(
      exists
        ? { alias: null, credentialId: ref, nodeIds, status: 'bound' }
        : { alias: ref, credentialId: null, nodeIds, status: 'unbound' },
    );
  }
  return report;
}

/** Subworkflows a version starts: each child must be live on the destination it depends on (default: the child's Production). */
async function dependencyReport(
  em: EntityManager,
  wf: Workflow,
  target: WorkflowTarget,
  version: WorkflowVersion,
): Promise<DependencyReport[]> {
  const report: DependencyReport[] = [];
  for (const node of version.nodes.filter((n) => n.type === 'subworkflow' && !n.disabled)) {
    const childId = String(node.config?.workflowId ?? '');
    const child = await em.findOne(WorkflowSchema, { id: childId, workspaceId: wf.workspaceId });
    if (!child) {
      report.push({
        nodeId: node.id,
        workflowId: childId,
        targetId: null,
        ready: false,
        reason: 'the child workflow does not exist in this workspace',
      });
      continue;
    }
    const wantedId = target.childDependencies[childId];
    const childTarget = wantedId
      ? await em.findOne(WorkflowTargetSchema, { id: wantedId, workflowId: child.id })
      : await em.findOne(WorkflowTargetSchema, { workflowId: child.id, kind: 'production' });
    let reason: string | null = null;
    if (child.trashed || child.status === 'disabled') reason = 'the child workflow is trashed or disabled';
    else if (!wantedId && !(child.status === 'deployed' && child.activeVersionId)) reason = 'the child workflow is not deployed';
    else if (wantedId && (!childTarget || !isLive(childTarget))) reason = 'the child destination is not published';
    report.push({ nodeId: node.id, workflowId: child.id, targetId: childTarget?.id ?? null, ready: reason === null, reason });
  }
  return report;
}
