/**
 * Knowledge sync runs: one bounded batch from a connector's provider, applied in one PostgreSQL
 * transaction, executed as a Temporal workflow whose id is the run id (temporal/workflows/knowledge.ts).
 *
 *   (none) ──POST /runs, certified provider, credential ok──> queued
 *   queued ──execute: lease claimed──> running      (the lease is the running execution: its
 *                                                    activity heartbeats renew it every third of it)
 *   running ──batch applied in one transaction──> succeeded
 *   running ──provider or persist failure──> failed (connector failed, lastError = run.error)
 *   queued | running ──POST cancel──> cancelled
 *   failed | cancelled ──replay, same key and options──> queued (and executed again)
 *   succeeded ──replay──> unchanged (no second apply)
 *   running ──a newer run starts after the lease expired──> failed (recovered by the newer run)
 *
 * Run id: `ksr_` + the first 40 hex of SHA-256(workspaceId NUL connectorId NUL Idempotency-Key).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { KnowledgeConnectorSchema, KnowledgeSyncRunSchema, type KnowledgeConnector, type KnowledgeSyncRun } from '../../db/entities';
import { canonicalJson } from '../../engine/canonicalJson';
import { conflict, internalFailure, invalidInput, notFound, unavailable, DomainError } from '../kernel/errors';
import { newId, randomToken, sha256Hex } from '../kernel/ids';
import { pickFields } from '../kernel/views';
import { httpRequest, OutboundError } from '../kernel/outbound';
import type { SyncExecutionOutcome } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { storableString, toStorable } from '../kernel/storableText';
import type { KnowledgeConfig } from '../kernel/config';
import { boundHostsText, hostAllowed, shownHost, type CredentialKeySettings, type ProviderUrls } from '../credentials';
import { findConnector } from './connectors';
import { resolveConnectorCredential, type ConnectorCredential } from './credentials';
import {
  acceptedCredentialTypes,
  defaultBaseUrl,
  FetchBudget,
  PROVIDERS,
  SYNC_CAPABILITY,
  SyncError,
  type ConnectorProvider,
  type SyncBatch,
  type SyncOptions,
} from './providers';
import type { KnowledgeRuntime } from './runtime';
import {
  connectorDocumentIds,
  connectorDocumentVersions,
  extendConnectorLease,
  extendSyncRunLease,
  failConnectorSync,
  failRunningSyncRun,
  failTakenOverSyncRun,
  finishConnectorSync,
  finishSyncRun,
  insertQueuedSyncRun,
  lockConnectorLease,
  lockSyncRunForApply,
  lockSyncRunForClaim,
  markSyncRunCancelled,
  releaseConnectorLeaseIdle,
  requeueSyncRun,
  startSyncRunLease,
  takeConnectorLease,
  tombstoneConnectorDocuments,
  upsertConnectorDocuments,
} from './store';
import { lastIdPage } from '../kernel/pagination';

export const SYNC_OPTION_BOUNDS = {
  maxPages: { min: 1, max: 50, default: 20 },
  maxItems: { min: 1, max: 5000, default: 1000 },
  maxBytes: { min: 1024, max: 52_428_800, default: 25_165_824 },
  timeoutMs: { min: 1000, max: 120_000, default: 60_000 },
} as const;

export const SYNC_MESSAGES = {
  onlyOptions: 'Only bounded sync options are accepted.',
  notQueued: 'Knowledge sync run is not queued.',
  cannotCancel: (status: string) => `Cannot cancel a ${status} knowledge sync run.`,
  uncertified: (providerId: string) => `Provider ${providerId} has not passed certification.`,
  leaseLost: 'Knowledge sync run lost its lease: it was cancelled, deleted or recovered by a newer run, so its batch was not applied.',
  leaseExpired: 'Knowledge sync run lease expired before its batch was applied; start a new run.',
  recovered: 'Knowledge sync run lease expired and was recovered by a newer run.',
  cancelled: 'Knowledge sync run was cancelled.',
  otherOptions: 'This Idempotency-Key was already used for a sync run of this connector with other options.',
} as const;

export function syncRunId(workspaceId: string, connectorId: string, key: string): string {
  return `ksr_${sha256Hex(`${workspaceId}\0${connectorId}\0${key}`).slice(0, 40)}`;
}

/** The fields of a sync run its view shows as stored (its options, fingerprint and lease stay inside). */
const SYNC_RUN_FIELDS = [
  'id',
  'workspaceId',
  'connectorId',
  'status',
  'cursorBefore',
  'cursorAfter',
  'fullSnapshot',
  'upsertedCount',
  'tombstonedCount',
  'error',
  'startedAt',
  'finishedAt',
  'createdAt',
  'updatedAt',
] as const;

export type SyncRunView = Pick<KnowledgeSyncRun, (typeof SYNC_RUN_FIELDS)[number]>;

export function syncRunView(r: KnowledgeSyncRun): SyncRunView {
  return { ...pickFields(r, SYNC_RUN_FIELDS), cursorBefore: r.cursorBefore ?? null, cursorAfter: r.cursorAfter ?? null };
}

// ---------------------------------------------------------------------------------------------
// Setup: certified provider and a usable credential

type SetupReason =
  | 'credential_missing'
  | 'credential_not_found'
  | 'credential_unreadable'
  | 'credential_type_incompatible'
  | 'credential_scopes_missing'
  | 'provider_address_refused'
  | 'credential_destination_refused';

const SETUP_TEXT: Record<SetupReason, string> = {
  credential_missing: 'its config names no credentialId',
  credential_not_found: 'the credential was not found in this workspace',
  credential_unreadable: 'the credential cannot be read (changed key or damaged value)',
  credential_type_incompatible: 'the credential has an incompatible type',
  credential_scopes_missing: 'the credential lacks required scopes',
  provider_address_refused:
    "the outbound guard refuses its provider's address (point the credential's baseUrl at the provider's public address)",
  credential_destination_refused:
    "the credential is not bound to the provider's address (add the host to the credential's allowedHosts, with its secret)",
};

function setupRequired(
  connector: KnowledgeConnector,
  provider: ConnectorProvider,
  reason: SetupReason,
  extra: Record<string, unknown> = {},
): DomainError {
  const credentialId = typeof connector.config.credentialId === 'string' ? connector.config.credentialId : null;
  return conflict(
    `Knowledge connector ${connector.id} needs setup: ${SETUP_TEXT[reason]}. Provider ${provider.id} takes a credential of type ${acceptedCredentialTypes(provider).join(' or ')}.`,
    {
      code: 'setup_required',
      envelope: {
        retryable: false,
        details: {
          availability: {
            status: 'setup_required',
            reason,
            providerId: provider.id,
            credentialId,
            acceptedCredentialTypes: acceptedCredentialTypes(provider),
            requiredScopes: provider.scopes,
            ...extra,
          },
        },
      },
    },
  );
}

/** The deployment's base URL of each provider, as the hosts a credential of that provider's type is bound to. */
function knowledgeProviderUrls(urls: KnowledgeConfig['providerBaseUrls']): ProviderUrls {
  const out: ProviderUrls = {};
  for (const [type, url] of Object.entries(urls)) if (url) out[type] = [url];
  return out;
}

/** Whether `url` is absolute http(s) and goes to a host the patterns allow. */
function boundTo(patterns: string[], url: string): boolean {
  try {
    return hostAllowed(patterns, new URL(url));
  } catch {
    return false;
  }
}

/** The connector's credential, or 409 `setup_required` saying why it cannot be used. */
export async function connectorCredential(
  em: EntityManager,
  keys: CredentialKeySettings,
  connector: KnowledgeConnector,
  providerUrls?: ProviderUrls,
): Promise<ConnectorCredential> {
  const provider = PROVIDERS[connector.providerId];
  const credentialId = connector.config.credentialId;
  if (typeof credentialId !== 'string' || credentialId === '') throw setupRequired(connector, provider, 'credential_missing');
  const resolved = await resolveConnectorCredential(em, connector.workspaceId, credentialId, keys, providerUrls);
  if (!resolved.ok)
    throw setupRequired(connector, provider, resolved.reason === 'not_found' ? 'credential_not_found' : 'credential_unreadable');
  const { credential } = resolved;
  if (!acceptedCredentialTypes(provider).includes(credential.type))
    throw setupRequired(connector, provider, 'credential_type_incompatible', { credentialType: credential.type });
  if (credential.type === 'oauth2' && credential.scopes) {
    const missing = provider.scopes.filter((s) => !credential.scopes!.includes(s));
    if (missing.length) throw setupRequired(connector, provider, 'credential_scopes_missing', { missingScopes: missing });
  }
  return credential;
}

// ---------------------------------------------------------------------------------------------
// API side: queue and execute, read, list, cancel

export async function startSyncRun(
  em: EntityManager,
  runtime: Pick<KnowledgeRuntime, 'config' | 'syncLauncher'>,
  keys: CredentialKeySettings,
  principal: WorkspacePrincipal,
  connectorId: string,
  key: string,
  options: SyncOptions,
): Promise<{ run: SyncRunView; replayed: boolean }> {
  const connector = await findConnector(em, principal.workspaceId, connectorId);
  const id = syncRunId(principal.workspaceId, connector.id, key);
  const fingerprint = sha256Hex(canonicalJson(options));
  // A replay of a succeeded run returns it as it is, whatever changed since (no second apply).
  const earlier = await em.fork().findOne(KnowledgeSyncRunSchema, { id, workspaceId: principal.workspaceId });
  if (earlier && earlier.requestFingerprint !== fingerprint) throw conflict(SYNC_MESSAGES.otherOptions);
  if (earlier?.status === 'succeeded') return { run: syncRunView(earlier), replayed: true };
  if (!runtime.config.certifiedProviders.includes(connector.providerId)) throw conflict(SYNC_MESSAGES.uncertified(connector.providerId));
  await connectorCredential(em, keys, connector);

  const now = new Date();
  await insertQueuedSyncRun(em, {
    id,
    workspaceId: principal.workspaceId,
    connectorId: connector.id,
    optionsJson: JSON.stringify(options),
    fingerprint,
    now,
  });
  const run = await em.fork().findOneOrFail(KnowledgeSyncRunSchema, { id, workspaceId: principal.workspaceId });
  if (run.requestFingerprint !== fingerprint) throw conflict(SYNC_MESSAGES.otherOptions);
  if (run.status === 'succeeded') return { run: syncRunView(run), replayed: true };
  if (run.status === 'running') throw conflict(`Knowledge sync run ${id} is already running.`);
  if (run.status === 'failed' || run.status === 'cancelled') {
    if (!(await requeueSyncRun(em, id, new Date())))
      throw conflict(`Knowledge sync run ${id} changed while it was being queued again; retry.`);
  }

  const leaseMs = runtime.config.syncLeaseMs;
  const outcome = await runtime.syncLauncher.execute(
    { workspaceId: principal.workspaceId, connectorId: connector.id, connectorName: connector.name, runId: id, options, leaseMs },
    options.timeoutMs + 2 * leaseMs + 30_000,
  );
  throwUnlessSucceeded(outcome, id);
  return { run: syncRunView(await em.fork().findOneOrFail(KnowledgeSyncRunSchema, { id })), replayed: false };
}

/** The agent capability `knowledge.sync`: what it takes and what it answers. */
export interface SyncCapabilityRequest {
  input: { connectorId: string } & SyncOptions;
  /** The agent's confirmation of a change to the knowledge base: required, `true`. */
  confirm: boolean | undefined;
  /** Required: it names the run exactly as on POST …/runs, so a replay is the same run. */
  idempotencyKey: string | null;
}

export const SYNC_CAPABILITY_MESSAGES = {
  confirmationRequired: 'knowledge.sync changes the knowledge base: send confirm: true to run it.',
} as const;

/**
 * The agent capability `knowledge.sync` on the same path as POST /knowledge-connectors/{id}/runs:
 * connectorId and the bounded options as input; idempotency (400 `idempotency_key_invalid`) and
 * confirmation (400 `validation_failed`) required; the connector's provider must offer the
 * capability (uncertified: 409 as on the runs route). The same key names the same run either
 * way, so a capability call replays a REST run and the other way round.
 */
export async function invokeSyncCapability(
  em: EntityManager,
  runtime: Pick<KnowledgeRuntime, 'config' | 'syncLauncher'>,
  keys: CredentialKeySettings,
  principal: WorkspacePrincipal,
  request: SyncCapabilityRequest,
): Promise<{ capability: typeof SYNC_CAPABILITY; effect: 'write'; run: SyncRunView; replayed: boolean }> {
  if (!request.idempotencyKey) throw invalidInput('Idempotency-Key header is required.', { code: 'idempotency_key_invalid' });
  if (request.confirm !== true) throw invalidInput(SYNC_CAPABILITY_MESSAGES.confirmationRequired, { code: 'validation_failed' });
  const { connectorId, ...options } = request.input;
  const { run, replayed } = await startSyncRun(em, runtime, keys, principal, connectorId, request.idempotencyKey, options);
  return { capability: SYNC_CAPABILITY, effect: 'write', run, replayed };
}

function throwUnlessSucceeded(outcome: SyncExecutionOutcome, runId: string): void {
  switch (outcome.kind) {
    case 'succeeded':
      return;
    case 'cancelled':
      throw conflict(SYNC_MESSAGES.cancelled);
    case 'still_running':
      throw unavailable(`Knowledge sync run ${runId} is still running; read it with GET …/runs/${runId}.`);
    case 'failed': {
      const opts = { code: outcome.code, envelope: outcome.envelope };
      if (outcome.errorKind === 'invalid') throw invalidInput(outcome.message, { ...opts, code: outcome.code ?? 'validation_failed' });
      if (outcome.errorKind === 'conflict') throw conflict(outcome.message, opts);
      throw internalFailure(outcome.message, { ...opts, code: outcome.code ?? 'internal_error' });
    }
  }
}

export async function getSyncRun(
  em: EntityManager,
  principal: WorkspacePrincipal,
  connectorId: string,
  runId: string,
): Promise<SyncRunView> {
  return syncRunView(await findRun(em, principal, connectorId, runId));
}

async function findRun(em: EntityManager, principal: WorkspacePrincipal, connectorId: string, runId: string): Promise<KnowledgeSyncRun> {
  await findConnector(em, principal.workspaceId, connectorId);
  const run = await em.findOne(KnowledgeSyncRunSchema, { id: runId, connectorId, workspaceId: principal.workspaceId });
  if (!run) throw notFound(`Knowledge sync run ${runId} not found.`);
  return run;
}

export async function listSyncRuns(
  em: EntityManager,
  principal: WorkspacePrincipal,
  connectorId: string,
  query: { cursor?: string; limit: number },
): Promise<{ runs: SyncRunView[]; nextCursor: string | null }> {
  await findConnector(em, principal.workspaceId, connectorId);
  const scope = { workspaceId: principal.workspaceId, connectorId };
  let where: Record<string, unknown> = scope;
  if (query.cursor) {
    const last = await em.findOne(KnowledgeSyncRunSchema, { ...scope, id: query.cursor });
    if (!last) throw invalidInput('Invalid cursor: pass the id of the last run of the previous page.', { code: 'validation_failed' });
    where = { ...scope, $or: [{ createdAt: { $lt: last.createdAt } }, { createdAt: last.createdAt, id: { $lt: last.id } }] };
  }
  const rows = await em.find(KnowledgeSyncRunSchema, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 });
  const { page, nextCursor } = lastIdPage(rows, query.limit);
  return { runs: page.map(syncRunView), nextCursor };
}

/** POST cancel: queued or running → cancelled (the lease is released, the execution cancelled); 409 from a terminal status. */
export async function cancelSyncRun(
  em: EntityManager,
  runtime: Pick<KnowledgeRuntime, 'syncLauncher'>,
  principal: WorkspacePrincipal,
  connectorId: string,
  runId: string,
): Promise<SyncRunView> {
  const run = await findRun(em, principal, connectorId, runId);
  const now = new Date();
  const cancelled = await em.transactional(async (tx) => {
    if (!(await markSyncRunCancelled(tx, run.id, now))) return false;
    await releaseConnectorLeaseIdle(tx, connectorId, run.id, now);
    return true;
  });
  if (!cancelled) {
    const current = await em.fork().findOneOrFail(KnowledgeSyncRunSchema, { id: run.id });
    throw conflict(SYNC_MESSAGES.cannotCancel(current.status));
  }
  await runtime.syncLauncher.cancel(run.id).catch(() => false);
  return syncRunView(await em.fork().findOneOrFail(KnowledgeSyncRunSchema, { id: run.id }));
}

// ---------------------------------------------------------------------------------------------
// Worker side: the sync workflow's activities

export interface SyncRunRef {
  workspaceId: string;
  connectorId: string;
  runId: string;
  options: SyncOptions;
  leaseMs: number;
}

/**
 * Claims the connector's lease for the run: queued → running. A run already running with its
 * lease (an activity retried after a crash) keeps its token. A lease held by another run that has
 * not expired refuses (the run stays queued); an expired one is taken over and its run failed.
 */
export async function claimSyncRun(em: EntityManager, ref: SyncRunRef): Promise<{ leaseToken: string }> {
  return em.transactional(async (tx) => {
    const now = new Date();
    const run = await lockSyncRunForClaim(tx, ref.runId);
    if (!run) throw new SyncError('conflict', SYNC_MESSAGES.leaseLost);
    const connector = await lockConnectorLease(tx, ref.connectorId);
    if (!connector) throw new SyncError('conflict', SYNC_MESSAGES.leaseLost);
    if (run.status === 'running' && run.lease_token && connector.sync_lease_run_id === ref.runId) return { leaseToken: run.lease_token };
    if (run.status !== 'queued') throw new SyncError('conflict', SYNC_MESSAGES.notQueued);
    const holder = connector.sync_lease_run_id;
    if (holder && holder !== ref.runId) {
      const expires = connector.sync_lease_expires_at ? new Date(connector.sync_lease_expires_at) : null;
      if (expires && expires > now) {
        throw new SyncError(
          'conflict',
          `Knowledge connector ${ref.connectorId} is already syncing (run ${holder}); its lease runs until ${expires.toISOString()}.`,
        );
      }
      await failTakenOverSyncRun(tx, holder, SYNC_MESSAGES.recovered, now);
    }
    const token = randomToken(18);
    const expiresAt = new Date(now.getTime() + ref.leaseMs);
    await takeConnectorLease(tx, { connectorId: ref.connectorId, runId: ref.runId, token, expiresAt, now });
    await startSyncRunLease(tx, {
      runId: ref.runId,
      token,
      expiresAt,
      now,
      cursorBefore: connector.cursor === null || connector.cursor === undefined ? null : JSON.stringify(connector.cursor),
    });
    return { leaseToken: token };
  });
}

/** Extends the run's lease by `leaseMs`; false when the run no longer holds it. */
export async function renewSyncLease(em: EntityManager, ref: SyncRunRef, token: string): Promise<boolean> {
  const expiresAt = new Date(Date.now() + ref.leaseMs);
  if (!(await extendSyncRunLease(em, ref.runId, token, expiresAt))) return false;
  await extendConnectorLease(em, ref.connectorId, ref.runId, token, expiresAt);
  return true;
}

export interface SyncWorkerDeps {
  /** The credentials area's keys (CREDENTIALS_KEY, previous keys, SECRET_KEY). */
  keys: CredentialKeySettings;
  config: KnowledgeConfig;
  allowPrivateNetworks: boolean;
}

interface StoredCursor {
  v: 1;
  filters: string;
  state: unknown;
}

/**
 * Fetches the run's batch from the provider (the lease renewed every third of it, while
 * `heartbeat` tells Temporal the activity lives) and applies it in one transaction. A run that
 * already succeeded (its activity retried after the commit) returns its counts without a second apply.
 */
export async function executeSyncRun(
  em: EntityManager,
  deps: SyncWorkerDeps,
  ref: SyncRunRef & { leaseToken: string },
  hooks: { heartbeat(): void; signal?: AbortSignal },
): Promise<{ upserted: number; tombstoned: number }> {
  const run = await em.fork().findOne(KnowledgeSyncRunSchema, { id: ref.runId });
  if (run?.status === 'succeeded') return { upserted: run.upsertedCount, tombstoned: run.tombstonedCount };
  if (!run || run.status !== 'running' || run.leaseToken !== ref.leaseToken) throw new SyncError('conflict', SYNC_MESSAGES.leaseLost);
  if (!(await renewSyncLease(em, ref, ref.leaseToken))) throw new SyncError('conflict', SYNC_MESSAGES.leaseLost);

  const lost = new AbortController();
  const timer = setInterval(
    () => {
      hooks.heartbeat();
      renewSyncLease(em, ref, ref.leaseToken).then(
        (held) => {
          if (!held) lost.abort(new SyncError('conflict', SYNC_MESSAGES.leaseLost));
        },
        () => undefined,
      );
    },
    Math.max(250, Math.floor(ref.leaseMs / 3)),
  );
  try {
    const connector = await em.fork().findOneOrFail(KnowledgeConnectorSchema, { id: ref.connectorId });
    const provider = PROVIDERS[connector.providerId];
    let credential: ConnectorCredential;
    try {
      credential = await connectorCredential(em, deps.keys, connector, knowledgeProviderUrls(deps.config.providerBaseUrls));
    } catch (err) {
      if (err instanceof DomainError) throw new SyncError('conflict', err.message, err.code, err.envelope);
      throw err;
    }
    const filterHash = sha256Hex(canonicalJson({ providerId: provider.id, filters: provider.filters(connector.config) }));
    const stored = connector.cursor as StoredCursor | null;
    if (stored && stored.filters !== filterHash) {
      throw new SyncError(
        'invalid',
        `The stored cursor of knowledge connector ${connector.id} was made for other filters; restore the filters it was made with, or create a new connector for the new ones.`,
      );
    }
    const baseUrl = (credential.baseUrl ?? defaultBaseUrl(provider, deps.config.providerBaseUrls))?.replace(/\/+$/, '');
    if (!baseUrl)
      throw new SyncError(
        'invalid',
        `Provider ${provider.id} has no API base URL: set it on the credential (baseUrl) or in KNOWLEDGE_${provider.id.toUpperCase()}_BASE_URL.`,
      );
    const budget = new FetchBudget(ref.options);
    const timeout = AbortSignal.timeout(ref.options.timeoutMs);
    const signal = AbortSignal.any([lost.signal, timeout, ...(hooks.signal ? [hooks.signal] : [])]);
    const auth = provider.authHeaders(credential);
    // Before each request (the base URL, and every link the provider answers with): the
    // credential goes only to hosts it is bound to (issue 27 item 5).
    const bound = (url: string) => {
      if (boundTo(credential.destinations, url)) return;
      const refusal = `Credential "${credential.name.slice(0, 200)}" may not be sent to ${shownHost(url)}: ${boundHostsText(credential.destinations)}.`;
      const setup = setupRequired(connector, provider, 'credential_destination_refused', { refusal });
      throw new SyncError('conflict', `${setup.message} ${refusal}`, setup.code, setup.envelope);
    };
    bound(baseUrl);
    let batch: SyncBatch;
    try {
      batch = await provider.fetch({
        config: connector.config,
        state: stored?.state ?? null,
        budget,
        credential,
        baseUrl,
        request: (req, opts) => {
          bound(req.url);
          return httpRequest(
            { ...req, headers: { ...auth, ...(req.headers ?? {}) }, timeoutMs: ref.options.timeoutMs },
            {
              allowPrivateNetworks: deps.allowPrivateNetworks,
              signal,
              maxResponseBytes: ref.options.maxBytes + 4 * 1024 * 1024,
              responseType: opts?.responseType,
            },
          );
        },
        knownVersions: (ids) => knownVersions(em, connector.id, ids),
        knownIds: (prefix) => knownIds(em, connector.id, prefix),
      });
    } catch (err) {
      if (lost.signal.aborted) throw lost.signal.reason;
      if (timeout.aborted || (err instanceof OutboundError && err.code === 'timeout')) {
        throw new SyncError(
          'invalid',
          `Fetch budget exceeded: the sync did not finish within timeoutMs (${ref.options.timeoutMs} ms); raise timeoutMs or narrow the connector's filters.`,
        );
      }
      // A refused address is the connector's setup, not a failure of the provider: 409, like a bad credential.
      if (err instanceof OutboundError && err.code === 'refused') {
        const setup = setupRequired(connector, provider, 'provider_address_refused', { refusal: err.message });
        throw new SyncError('conflict', `${setup.message} ${err.message}`, setup.code, setup.envelope);
      }
      if (err instanceof OutboundError) throw new SyncError('internal', `Provider ${provider.id} could not be reached: ${err.message}`);
      throw err;
    }
    const cursor = batch.cursor === undefined ? undefined : ({ v: 1, filters: filterHash, state: batch.cursor } satisfies StoredCursor);
    try {
      return await applyBatch(em, ref, connector, batch, cursor);
    } catch (err) {
      throw persistFailure(err);
    }
  } finally {
    clearInterval(timer);
  }
}

/**
 * A batch the database refuses for what it contains (a data or integrity error, a rule raised by
 * the database) fails the run at once; other errors (connection lost) are retried by Temporal.
 */
function persistFailure(err: unknown): unknown {
  if (err instanceof SyncError) return err;
  const sqlState = String((err as { code?: unknown }).code ?? (err as { sqlState?: unknown }).sqlState ?? '');
  if (/^(22|23|P0)/.test(sqlState))
    return new SyncError(
      'internal',
      `Persisting the batch failed, nothing was applied: ${((err as Error).message.split('\n')[0] ?? '').slice(0, 300)}`,
    );
  return err;
}

async function knownVersions(em: EntityManager, connectorId: string, externalIds: string[]): Promise<Map<string, string | null>> {
  if (externalIds.length === 0) return new Map();
  const rows = await connectorDocumentVersions(em, connectorId, JSON.stringify(toStorable(externalIds)));
  return new Map(rows.map((r) => [r.external_id, r.external_version]));
}

async function knownIds(em: EntityManager, connectorId: string, prefix: string): Promise<string[]> {
  const rows = await connectorDocumentIds(em, connectorId, prefix);
  return rows.map((r) => r.external_id);
}

/** The batch in one transaction: lease checked, documents upserted and tombstoned, run and connector finished. */
async function applyBatch(
  em: EntityManager,
  ref: SyncRunRef & { leaseToken: string },
  connector: KnowledgeConnector,
  batch: SyncBatch,
  cursor: StoredCursor | undefined,
): Promise<{ upserted: number; tombstoned: number }> {
  const byId = new Map(batch.upserts.map((u) => [u.externalId, u]));
  const upserts = [...byId.values()];
  return em.transactional(async (tx) => {
    const now = new Date();
    const run = await lockSyncRunForApply(tx, ref.runId);
    if (!run || run.status !== 'running' || run.lease_token !== ref.leaseToken) throw new SyncError('conflict', SYNC_MESSAGES.leaseLost);
    if (run.lease_expires_at && new Date(run.lease_expires_at) < now) throw new SyncError('conflict', SYNC_MESSAGES.leaseExpired);
    for (let i = 0; i < upserts.length; i += 1000) {
      const rows = upserts.slice(i, i + 1000).map((u) => ({
        id: newId('doc'),
        external_id: u.externalId,
        version: u.version,
        url: u.url,
        title: u.title.slice(0, 1000) || u.externalId,
        mime_type: u.mimeType,
        size_bytes: Buffer.byteLength(u.content),
        sha256: sha256Hex(u.content),
        content: u.content,
        metadata: u.metadata,
      }));
      await upsertConnectorDocuments(tx, connector, ref.runId, now, JSON.stringify(toStorable(rows)));
    }
    if (batch.tombstones.length > 0) {
      await tombstoneConnectorDocuments(tx, connector.id, JSON.stringify(toStorable(batch.tombstones)), now);
    }
    const cursorAfter = cursor === undefined ? (run.cursor_before ?? null) : cursor;
    await finishSyncRun(tx, {
      runId: ref.runId,
      upserted: upserts.length,
      tombstoned: batch.tombstones.length,
      cursorAfter: cursorAfter === null ? null : JSON.stringify(toStorable(cursorAfter)),
      fullSnapshot: batch.fullSnapshot,
      now,
    });
    await finishConnectorSync(tx, connector.id, ref.runId, cursor === undefined ? undefined : JSON.stringify(toStorable(cursor)), now);
    return { upserted: upserts.length, tombstoned: batch.tombstones.length };
  });
}

/** A claimed run failed: failed with `error`, the connector failed with the same lastError, the lease released. */
export async function failSyncRun(em: EntityManager, ref: SyncRunRef & { leaseToken: string }, error: string): Promise<void> {
  const message = storableString(error.slice(0, 4000));
  await em.transactional(async (tx) => {
    const now = new Date();
    if (!(await failRunningSyncRun(tx, ref.runId, ref.leaseToken, message, now))) return;
    await failConnectorSync(tx, ref.connectorId, ref.runId, message, now);
  });
}
