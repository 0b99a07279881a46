/**
 * Knowledge connectors: a provider, its config (a `credentialId` and provider filters, validated
 * when a run fetches) and its cursor, per knowledge base (names unique per base). Deleting one
 * removes its runs; its documents stay, with `connectorId` cleared.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { flushUnique } from '../kernel/flush';
import { KnowledgeBaseSchema, KnowledgeConnectorSchema, type ConnectorProviderId, type KnowledgeConnector } from '../../db/entities';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { findInWorkspace, newWorkspaceRow } from '../kernel/workspaceScope';
import type { WorkspacePrincipal } from '../kernel/principal';
import type { KnowledgeSyncLauncher } from '../kernel/ports';
import { providerRegistry, type ProviderRegistryEntry } from './providers';
import { lastIdPage } from '../kernel/pagination';

export interface ConnectorView {
  id: string;
  workspaceId: string;
  knowledgeBaseId: string;
  name: string;
  providerId: ConnectorProviderId;
  status: KnowledgeConnector['status'];
  config: Record<string, unknown>;
  cursor: unknown;
  lastSyncedAt: Date | null;
  nextSyncAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function connectorView(c: KnowledgeConnector): ConnectorView {
  return {
    id: c.id,
    workspaceId: c.workspaceId,
    knowledgeBaseId: c.knowledgeBaseId,
    name: c.name,
    providerId: c.providerId,
    status: c.status,
    config: c.config,
    cursor: c.cursor ?? null,
    lastSyncedAt: c.lastSyncedAt,
    nextSyncAt: c.nextSyncAt,
    lastError: c.lastError,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

export async function findConnector(em: EntityManager, workspaceId: string, id: string): Promise<KnowledgeConnector> {
  return findInWorkspace(em, KnowledgeConnectorSchema, workspaceId, id, `Knowledge connector ${id} not found.`);
}

/** Config must be an object with a non-empty `credentialId` string. */
function checkConfig(config: Record<string, unknown>): Record<string, unknown> {
  const credentialId = config.credentialId;
  if (typeof credentialId !== 'string' || credentialId.trim() === '')
    throw invalidInput('config.credentialId is required: the id of a credential for the provider.', { code: 'validation_failed' });
  if (JSON.stringify(config).length > 16_384) throw invalidInput('config must be at most 16 KiB of JSON.', { code: 'validation_failed' });
  return { ...config, credentialId: credentialId.trim() };
}

const duplicateName = (name: string) => conflict(`A knowledge connector named "${name}" already exists in this knowledge base.`);

export async function listConnectors(
  em: EntityManager,
  principal: WorkspacePrincipal,
  certified: string[],
  query: { knowledgeBaseId?: string; cursor?: string; limit: number },
): Promise<{ connectors: ConnectorView[]; nextCursor: string | null; providers: ProviderRegistryEntry[] }> {
  const scope: Record<string, unknown> = {
    workspaceId: principal.workspaceId,
    ...(query.knowledgeBaseId ? { knowledgeBaseId: query.knowledgeBaseId } : {}),
  };
  let where = scope;
  if (query.cursor) {
    const last = await em.findOne(KnowledgeConnectorSchema, { id: query.cursor, workspaceId: principal.workspaceId });
    if (!last) throw invalidInput('Invalid cursor: pass the id of the last connector of the previous page.', { code: 'validation_failed' });
    where = { ...scope, $or: [{ createdAt: { $lt: last.createdAt } }, { createdAt: last.createdAt, id: { $lt: last.id } }] };
  }
  const rows = await em.find(KnowledgeConnectorSchema, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 });
  const { page, nextCursor } = lastIdPage(rows, query.limit);
  return {
    connectors: page.map(connectorView),
    nextCursor,
    providers: providerRegistry(certified),
  };
}

export async function getConnector(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<ConnectorView> {
  return connectorView(await findConnector(em, principal.workspaceId, id));
}

export interface CreateConnectorInput {
  knowledgeBaseId: string;
  providerId: ConnectorProviderId;
  name: string;
  config?: Record<string, unknown>;
}

export async function createConnector(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: CreateConnectorInput,
): Promise<ConnectorView> {
  const config = input.config === undefined ? {} : checkConfig(input.config);
  const kb = await em.findOne(KnowledgeBaseSchema, { id: input.knowledgeBaseId, workspaceId: principal.workspaceId, trashedAt: null });
  if (!kb) throw notFound(`Knowledge base ${input.knowledgeBaseId} not found.`);
  if (await em.count(KnowledgeConnectorSchema, { knowledgeBaseId: kb.id, name: input.name })) throw duplicateName(input.name);
  const connector = em.create(KnowledgeConnectorSchema, {
    ...newWorkspaceRow('kc', principal.workspaceId),
    knowledgeBaseId: kb.id,
    name: input.name,
    providerId: input.providerId,
    status: 'idle',
    config,
    cursor: null,
    lastSyncedAt: null,
    nextSyncAt: null,
    lastError: null,
    syncLeaseRunId: null,
    syncLeaseToken: null,
    syncLeaseExpiresAt: null,
  });
  em.persist(connector);
  await flushUnique(em, () => duplicateName(input.name));
  return connectorView(connector);
}

export async function updateConnector(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  input: { name?: string; config?: Record<string, unknown>; nextSyncAt?: Date | null },
): Promise<ConnectorView> {
  const connector = await findConnector(em, principal.workspaceId, id);
  if (input.config !== undefined) connector.config = checkConfig(input.config);
  if (input.name !== undefined && input.name !== connector.name) {
    if (await em.count(KnowledgeConnectorSchema, { knowledgeBaseId: connector.knowledgeBaseId, name: input.name, id: { $ne: id } }))
      throw duplicateName(input.name);
    connector.name = input.name;
  }
  if (input.nextSyncAt !== undefined) connector.nextSyncAt = input.nextSyncAt;
  connector.updatedAt = new Date();
  await flushUnique(em, () => duplicateName(connector.name));
  return connectorView(connector);
}

/** Deletes the connector and its runs (cascade); its documents keep their rows with connectorId cleared. A sync in progress is cancelled. */
export async function deleteConnector(
  em: EntityManager,
  launcher: KnowledgeSyncLauncher,
  principal: WorkspacePrincipal,
  id: string,
): Promise<{ deleted: true; connectorId: string }> {
  const connector = await findConnector(em, principal.workspaceId, id);
  const leaseRun = connector.syncLeaseRunId;
  await em.nativeDelete(KnowledgeConnectorSchema, { id: connector.id, workspaceId: principal.workspaceId });
  if (leaseRun) await launcher.cancel(leaseRun).catch(() => false);
  return { deleted: true, connectorId: connector.id };
}
