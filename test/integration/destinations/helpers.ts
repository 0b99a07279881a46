/** Shared steps of the destinations tests: changes with idempotency keys, approvals with a session, fixtures. */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type {
  approvalSchema,
  changeResultSchema,
  historyEntrySchema,
  publicationPreviewSchema,
  targetListSchema,
  targetSchema,
} from '../../../api/schemas/destinations';
import {
  http,
  signInCookie,
  type CreatedWorkflow,
  type CredentialEnvelope,
  type HttpResult,
  type Refusable,
  type TestApp,
  type WorkspaceFixture,
} from '../../kit';

export type WorkflowTarget = z.infer<typeof targetSchema>;
export type HistoryEntry = z.infer<typeof historyEntrySchema>;
export type TargetList = z.infer<typeof targetListSchema>;
/** GET /targets?includeHistory=true: the list with its history. */
export type TargetListWithHistory = TargetList & { history: HistoryEntry[] };
export type ChangeResult = z.infer<typeof changeResultSchema>;
/** A change's answer, or its refusal (`{ error, code?, revision? }`); check `status` first. */
export type ChangeAnswer = Refusable<ChangeResult> & { revision?: number };
export type Approval = z.infer<typeof approvalSchema>['approval'];
export type PublicationPreview = z.infer<typeof publicationPreviewSchema>;

export const targetsPath = (workflowId: string) => `/api/v1/workflows/${workflowId}/targets`;

/** POST /targets with `confirm: true` and a fresh Idempotency-Key header unless one is given. */
export function change(
  app: TestApp,
  token: string,
  workflowId: string,
  body: Record<string, unknown>,
  opts: { key?: string | null; bodyKey?: string; confirm?: unknown } = {},
): Promise<HttpResult<ChangeAnswer>> {
  const key = opts.key === undefined ? randomUUID() : opts.key;
  return http<ChangeAnswer>(app, 'POST', targetsPath(workflowId), {
    token,
    body: {
      confirm: opts.confirm === undefined ? true : opts.confirm,
      change: body,
      ...(opts.bodyKey ? { idempotencyKey: opts.bodyKey } : {}),
    },
    headers: key === null ? {} : { 'idempotency-key': key },
  });
}

/** A change that must succeed; returns its body. */
export async function changed(app: TestApp, token: string, workflowId: string, body: Record<string, unknown>): Promise<ChangeResult> {
  const res = await change(app, token, workflowId, body);
  if (res.status !== 200) throw new Error(`${String(body.action)} failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function listTargets(app: TestApp, token: string, workflowId: string, includeHistory: true): Promise<TargetListWithHistory>;
export async function listTargets(app: TestApp, token: string, workflowId: string, includeHistory?: false): Promise<TargetList>;
export async function listTargets(app: TestApp, token: string, workflowId: string, includeHistory = false): Promise<TargetList> {
  const res = await http<TargetList>(app, 'GET', `${targetsPath(workflowId)}${includeHistory ? '?includeHistory=true' : ''}`, { token });
  if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`);
  return res.body;
}

/** The workflow's Production destination; fails the test when the list has none. */
export async function production(app: TestApp, token: string, workflowId: string): Promise<WorkflowTarget> {
  return found(
    (await listTargets(app, token, workflowId)).targets.find((t) => t.kind === 'production'),
    `Production of ${workflowId}`,
  );
}

/** One destination of the workflow; fails the test when the list does not have it. */
export async function targetById(app: TestApp, token: string, workflowId: string, targetId: string): Promise<WorkflowTarget> {
  return found(
    (await listTargets(app, token, workflowId)).targets.find((t) => t.targetId === targetId),
    `destination ${targetId}`,
  );
}

function found<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

/** A workflow with this graph (default: start → transform). */
export async function createWorkflow(
  app: TestApp,
  token: string,
  graph?: { nodes: object[]; edges: object[] },
  name = 'Destinations',
): Promise<string> {
  const g = graph ?? {
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'out', type: 'transform', config: { expression: '"v1"' } },
    ],
    edges: [{ source: 'start', target: 'out' }],
  };
  const res = await http<CreatedWorkflow>(app, 'POST', '/api/v1/workflows', { token, body: { name, ...g } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body.workflow.id;
}

/** start → transform returning `value`: graphs that differ by value make distinct versions. */
export function graphReturning(
  value: string,
  trigger: object = { id: 'start', type: 'start', config: {} },
): { nodes: object[]; edges: object[] } {
  const triggerId = (trigger as { id: string }).id;
  return {
    nodes: [trigger, { id: 'out', type: 'transform', config: { expression: JSON.stringify(value) } }],
    edges: [{ source: triggerId, target: 'out' }],
  };
}

/** Signs the workspace owner in (a session is the only way to approve). */
export function ownerCookie(app: TestApp, ws: WorkspaceFixture): Promise<string> {
  return signInCookie(app, ws.ownerEmail, ws.ownerPassword, ws.workspaceId);
}

/** A session approval of `versionId` (as the destination shows it: a missing one is sent as is and refused). */
export function approve(
  app: TestApp,
  cookie: string,
  workflowId: string,
  targetId: string,
  versionId: string | null | undefined,
  permitsReactivation?: boolean,
): Promise<HttpResult<Refusable<{ approval: Approval }>>> {
  return http<Refusable<{ approval: Approval }>>(app, 'POST', `/api/workflows/${workflowId}/targets/${targetId}/approvals`, {
    cookie,
    body: { versionId, ...(permitsReactivation === undefined ? {} : { permitsReactivation }) },
  });
}

export async function approved(
  app: TestApp,
  cookie: string,
  workflowId: string,
  targetId: string,
  versionId: string | null | undefined,
  permitsReactivation?: boolean,
): Promise<Approval> {
  const res = await approve(app, cookie, workflowId, targetId, versionId, permitsReactivation);
  if (res.status !== 201) throw new Error(`approval failed: ${res.status} ${res.text}`);
  return res.body.approval;
}

/** publish of a destination's candidate as it is now. */
export async function publishCandidate(
  app: TestApp,
  token: string,
  workflowId: string,
  target: Pick<WorkflowTarget, 'targetId' | 'revision' | 'candidateVersionId'>,
  extra: Record<string, unknown> = {},
): Promise<HttpResult<ChangeAnswer>> {
  return change(app, token, workflowId, {
    action: 'publish',
    targetId: target.targetId,
    expectedRevision: target.revision,
    versionId: target.candidateVersionId,
    requestId: randomUUID(),
    ...extra,
  });
}

/** A preview of `workflowId` at a new version returning `value`, published under an owner approval. Returns the preview. */
export async function publishedPreview(
  app: TestApp,
  ws: WorkspaceFixture,
  cookie: string,
  workflowId: string,
  name: string,
  graph: { nodes: object[]; edges: object[] },
): Promise<WorkflowTarget> {
  const prep = await changed(app, ws.token, workflowId, { action: 'prepare-production' });
  const created = await changed(app, ws.token, workflowId, { action: 'create-preview', versionId: prep.receipt.versionId, name });
  const saved = await changed(app, ws.token, workflowId, {
    action: 'save-candidate',
    targetId: created.target.targetId,
    expectedRevision: created.target.revision,
    name,
    ...graph,
  });
  await approved(app, cookie, workflowId, saved.target.targetId, saved.target.candidateVersionId);
  const published = await publishCandidate(app, ws.token, workflowId, saved.target);
  if (published.status !== 200) throw new Error(`publish failed: ${published.status} ${published.text}`);
  return published.body.target;
}

/** A bearer credential of the workspace, through the credentials API. */
export async function createCredential(app: TestApp, ws: WorkspaceFixture, name = `cred-${randomUUID().slice(0, 8)}`): Promise<string> {
  const res = await http<CredentialEnvelope>(app, 'POST', '/api/v1/credentials', {
    token: ws.token,
    body: { name, type: 'bearer', value: 'token-0123456789' },
  });
  if (res.status !== 201) throw new Error(`credential create failed: ${res.status} ${res.text}`);
  return res.body.credential.id;
}

/** Everything the destinations tables hold for a workflow, to show a refused request changed nothing. */
export async function snapshot(app: TestApp, workflowId: string): Promise<string> {
  const conn = app.orm.em.fork().getConnection();
  const parts = await Promise.all(
    [
      'workflow_targets',
      'workflow_target_activations',
      'workflow_target_approvals',
      'workflow_target_sources',
      'workflow_versions',
      'webhooks',
      'workflows',
      'runs',
    ].map((table) =>
      conn.execute(`select * from ${table} where ${table === 'workflows' ? 'id' : 'workflow_id'} = ? order by id`, [workflowId]),
    ),
  );
  return JSON.stringify(parts);
}
