/**
 * Knowledge bases: a named collection of documents with its chunking settings. PATCH
 * `{ trashed }` trashes or restores one; a trashed base keeps its documents but is left out of
 * search and takes no new documents or connectors.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { KnowledgeBaseSchema, type KnowledgeBase } from '../../db/entities';
import { conflict } from '../kernel/errors';
import { findInWorkspace, newWorkspaceRow } from '../kernel/workspaceScope';
import type { WorkspacePrincipal } from '../kernel/principal';
import { DEFAULT_CHUNKING, type ChunkingSettings } from './chunking';
import { lockKnowledgeBaseName } from './store';

export interface KnowledgeBaseView extends Pick<KnowledgeBase, 'id' | 'name' | 'description' | 'trashedAt' | 'createdAt' | 'updatedAt'> {
  chunking: ChunkingSettings;
  trashed: boolean;
}

export function knowledgeBaseView(kb: KnowledgeBase): KnowledgeBaseView {
  return {
    id: kb.id,
    name: kb.name,
    description: kb.description,
    chunking: chunkingOf(kb),
    trashed: kb.trashedAt !== null,
    trashedAt: kb.trashedAt,
    createdAt: kb.createdAt,
    updatedAt: kb.updatedAt,
  };
}

export const chunkingOf = (kb: KnowledgeBase): ChunkingSettings => ({
  minChunkSizeChars: kb.minChunkSizeChars,
  maxChunkSizeTokens: kb.maxChunkSizeTokens,
  overlapTokens: kb.overlapTokens,
});

/** The base `id` of the caller's workspace (trashed or not); another workspace's id is not found. */
export async function findKnowledgeBase(em: EntityManager, workspaceId: string, id: string): Promise<KnowledgeBase> {
  return findInWorkspace(em, KnowledgeBaseSchema, workspaceId, id, `Knowledge base ${id} not found.`);
}

/** The base `id`, which must not be trashed (adding documents). */
export async function findActiveKnowledgeBase(em: EntityManager, workspaceId: string, id: string): Promise<KnowledgeBase> {
  const kb = await findKnowledgeBase(em, workspaceId, id);
  if (kb.trashedAt) throw conflict(`Knowledge base ${id} is trashed; restore it before adding documents.`);
  return kb;
}

export async function listKnowledgeBases(em: EntityManager, principal: WorkspacePrincipal): Promise<KnowledgeBaseView[]> {
  const rows = await em.find(
    KnowledgeBaseSchema,
    { workspaceId: principal.workspaceId },
    { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
  );
  return rows.map(knowledgeBaseView);
}

export async function getKnowledgeBase(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<KnowledgeBaseView> {
  return knowledgeBaseView(await findKnowledgeBase(em, principal.workspaceId, id));
}

export interface CreateKnowledgeBaseInput {
  name: string;
  description?: string | null;
  chunking?: Partial<ChunkingSettings>;
}

export async function createKnowledgeBase(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: CreateKnowledgeBaseInput,
): Promise<KnowledgeBaseView> {
  const chunking = { ...DEFAULT_CHUNKING, ...(input.chunking ?? {}) };
  const kb = em.create(KnowledgeBaseSchema, {
    ...newWorkspaceRow('kb', principal.workspaceId),
    name: input.name,
    description: input.description ?? null,
    ...chunking,
    trashedAt: null,
  });
  await em.persistAndFlush(kb);
  return knowledgeBaseView(kb);
}

/** PATCH `{ trashed }`: trashes (keeping the first trash time) or restores. */
export async function setKnowledgeBaseTrashed(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  trashed: boolean,
): Promise<KnowledgeBaseView> {
  const kb = await findKnowledgeBase(em, principal.workspaceId, id);
  if (trashed !== (kb.trashedAt !== null)) {
    kb.trashedAt = trashed ? new Date() : null;
    kb.updatedAt = new Date();
    await em.flush();
  }
  return knowledgeBaseView(kb);
}

/**
 * The workspace's untrashed base named `name`, created (default chunking) when there is none.
 * Runs inside the caller's transaction; an advisory lock keeps two callers from creating two.
 */
export async function findOrCreateKnowledgeBase(
  tx: EntityManager,
  workspaceId: string,
  name: string,
  description: string | null,
): Promise<KnowledgeBase> {
  await lockKnowledgeBaseName(tx, workspaceId, name);
  const existing = await tx.findOne(
    KnowledgeBaseSchema,
    { workspaceId, name, trashedAt: null },
    { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
  );
  if (existing) return existing;
  const kb = tx.create(KnowledgeBaseSchema, {
    ...newWorkspaceRow('kb', workspaceId),
    name,
    description,
    ...DEFAULT_CHUNKING,
    trashedAt: null,
  });
  await tx.persistAndFlush(kb);
  return kb;
}
