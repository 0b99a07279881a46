/**
 * End users: runs that a product's end-user gateway key (scope `end_user_gateway`) starts
 * for one of its end users, and that key's narrow view of those runs. A gateway key runs only
 * the workflows of its allowlist, only their active version, always on the durable engine,
 * and sees only the runs it created, as the end-user run summary.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AdmitRun } from '../kernel/runAdmission';
import { RunSchema, type Run } from '../../db/entities';
import { AUTH_MESSAGES, forbidden, invalidInput, notFound } from '../kernel/errors';
import type { RunLauncher } from '../kernel/ports';
import type { ApiKeyPrincipal, WorkspacePrincipal } from '../kernel/principal';
import { cancelRun, executeWorkflow, isTerminal, RUN_NOT_FOUND, type ExecuteInput } from './';
import { WORKFLOW_FORBIDDEN } from '../workflows';

/** An anchored principal holding an end-user gateway key. */
export type GatewayPrincipal = WorkspacePrincipal & ApiKeyPrincipal & { scope: 'end_user_gateway' };

export function isEndUserGateway(principal: WorkspacePrincipal): principal is GatewayPrincipal {
  return principal.kind === 'api_key' && principal.scope === 'end_user_gateway';
}

/**
 * What an end-user gateway key sees of a run: identity, progress and the workflow's output
 * once it succeeded. Never the input (it holds other fields than the end user's message),
 * steps, logs, waits, versions, error text or cancel reasons: node errors can carry internal
 * hosts, headers or code that an end user must not read.
 */
export interface EndUserRunSummary {
  id: string;
  workflowId: string;
  status: Run['status'];
  active: boolean;
  endUser: { externalId: string | null };
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  /** The run's output when it succeeded; null while it runs and when it failed or was canceled. */
  output: unknown;
}

export function endUserRunSummary(run: Run): EndUserRunSummary {
  return {
    id: run.id,
    workflowId: run.workflowId,
    status: run.status,
    active: !isTerminal(run.status),
    endUser: { externalId: run.endUserExternalId },
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    durationMs: run.durationMs,
    output: run.status === 'succeeded' ? run.output : null,
  };
}

const GATEWAY_REFUSED_FIELDS = ['startNodeId', 'executionTargetId', 'expectedVersionId', 'confirm'] as const;

/**
 * Execute rule 4 for a gateway key: the workflow must be in the key's allowlist (403 like any
 * other workflow the key cannot reach), the request must carry `endUser` and a non-blank
 * `message`, and it runs the active version, queued on the durable engine (no candidate, dry
 * run, start node or destination). The run input is the caller's `input` object with
 * `message` and `endUser` set on top, so the workflow reads the message as `message`. Throws
 * `unavailable` when the engine refuses the start (the run is recorded canceled).
 */
export async function executeForEndUser(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  workflowId: string,
  body: ExecuteInput,
  admit?: AdmitRun,
): Promise<EndUserRunSummary> {
  const key = requireGateway(principal);
  if (!(key.allowedWorkflowIds ?? []).includes(workflowId)) throw forbidden(WORKFLOW_FORBIDDEN);
  const { endUser, message } = body;
  if (!endUser || message === undefined || message.trim() === '') {
    throw invalidInput('A product gateway key must send endUser { externalId } and a non-blank message.');
  }
  if (body.target !== 'active' || body.dryRun === true)
    throw invalidInput('End-user runs execute the active version only (no candidate, no dry run).');
  const refused = GATEWAY_REFUSED_FIELDS.filter((field) => body[field] !== undefined);
  if (refused.length > 0) throw invalidInput(`Not accepted from a product gateway key: ${refused.join(', ')}.`);
  if (body.input !== undefined && (body.input === null || typeof body.input !== 'object' || Array.isArray(body.input))) {
    throw invalidInput('input must be a JSON object for end-user runs (message and endUser are added to it).');
  }

  const input = { ...(body.input as Record<string, unknown> | undefined), message, endUser: { externalId: endUser.externalId } };
  const result = await executeWorkflow(em, launcher, key, workflowId, { target: 'active', input, endUser, message }, 'api', { admit });
  return endUserRunSummary(result.run);
}

/** A run this gateway key created; 404 for every other run (other keys', other workspaces', missing). */
export async function getEndUserRun(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<EndUserRunSummary> {
  return endUserRunSummary(await loadOwnRun(em, requireGateway(principal), id));
}

/** Cancels a run this gateway key created; 404 like `getEndUserRun`, conflict when it already ended. */
export async function cancelEndUserRun(
  em: EntityManager,
  launcher: RunLauncher,
  principal: WorkspacePrincipal,
  id: string,
): Promise<EndUserRunSummary> {
  const key = requireGateway(principal);
  const run = await loadOwnRun(em, key, id);
  return endUserRunSummary(await cancelRun(em, launcher, key, run.id));
}

async function loadOwnRun(em: EntityManager, key: GatewayPrincipal, id: string): Promise<Run> {
  const run = await em.findOne(RunSchema, { id, workspaceId: key.workspaceId, createdByKeyId: key.apiKeyId });
  if (!run) throw notFound(RUN_NOT_FOUND);
  return run;
}

// The auth middleware already admits only gateway keys here; this keeps the services safe to call from elsewhere.
function requireGateway(principal: WorkspacePrincipal): GatewayPrincipal {
  if (!isEndUserGateway(principal)) throw forbidden(AUTH_MESSAGES.gatewayKeyRequired);
  return principal;
}
