/**
 * Skills: reusable instructions (and attached files) that agents load on demand.
 *
 * Each row is one version. The versions of one skill form a lineage (`lineageId`, the id of
 * version 1; `parentVersionId` points at the version a row was made from):
 *
 *   (none) ──create──> private draft v1 (owner: the caller)
 *   draft ──update, or create with the owner's name──> same row, changed in place
 *   draft ──request publication (session)──> pending            (publication.ts)
 *   pending ──update──> pending archived + new private draft v(n+1)
 *   pending ──publish (session, Admin or Owner)──> published, visibility workspace;
 *                                                   the lineage's previous published version archived
 *   published ──update of content──> new private draft v(n+1) (published stays); `enabled` alone in place
 *   published ──rollback (session)──> archived; the previous published version published again
 *   published ──archive (session)──> archived
 *
 * Visibility (every read): published workspace skills to every member of the workspace;
 * private draft or pending versions to their owner only; archived versions to nobody through
 * the API. Another workspace's id, or a version the caller may not see, is `Skill not found.`
 */
import { LockMode, UniqueConstraintViolationException, type EntityManager, type FilterQuery } from '@mikro-orm/postgresql';
import { SkillSchema, type Skill, type SkillPublicationStatus } from '../../db/entities';
import { conflict, forbidden, invalidInput, notFound } from '../kernel/errors';
import { readyFilesByIds } from '../files';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { parseSkillContent } from './content';

/** The spec's exact messages of the skills area. */
export const SKILL_MESSAGES = {
  notFound: 'Skill not found.',
  nameAndInstructionsRequired: 'Skill name and instructions are required.',
  ownerOnly: 'Only the skill owner can edit this skill.',
  publishedNotDeletable: 'Published skills cannot be deleted. Roll back or archive the publication first.',
  pendingReview: 'This skill already has a version awaiting publication review.',
} as const;

export const SKILL_LIMITS = {
  nameChars: 120,
  descriptionChars: 2_000,
  instructionsChars: 100_000,
  contentChars: 200_000,
  files: 20,
} as const;

/** A skill version as clients see it (the spec's Skill resource, plus the attached file ids). */
export type SkillView = Pick<
  Skill,
  | 'id'
  | 'workspaceId'
  | 'ownerId'
  | 'name'
  | 'description'
  | 'instructions'
  | 'enabled'
  | 'visibility'
  | 'publicationStatus'
  | 'version'
  | 'parentVersionId'
  | 'fileIds'
  | 'reviewerId'
  | 'reviewRequestedAt'
  | 'reviewedAt'
  | 'publishedAt'
  | 'usageCount'
  | 'lastUsedAt'
  | 'createdAt'
  | 'updatedAt'
>;

export function skillView(s: Skill): SkillView {
  return {
    id: s.id,
    workspaceId: s.workspaceId,
    ownerId: s.ownerId,
    name: s.name,
    description: s.description,
    instructions: s.instructions,
    enabled: s.enabled,
    visibility: s.visibility,
    publicationStatus: s.publicationStatus,
    version: s.version,
    parentVersionId: s.parentVersionId,
    fileIds: [...s.fileIds],
    reviewerId: s.reviewerId,
    reviewRequestedAt: s.reviewRequestedAt,
    reviewedAt: s.reviewedAt,
    publishedAt: s.publishedAt,
    usageCount: s.usageCount,
    lastUsedAt: s.lastUsedAt,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

const WORKING: SkillPublicationStatus[] = ['draft', 'pending'];

/** The skills of the principal's workspace the principal may see (the spec's visibility rule). */
export function discoverableBy(principal: WorkspacePrincipal): FilterQuery<Skill> {
  return {
    workspaceId: principal.workspaceId,
    $or: [
      { visibility: 'workspace', publicationStatus: 'published' },
      { visibility: 'private', ownerId: principal.userId, publicationStatus: { $in: WORKING } },
    ],
  };
}

/** `text` as an ILIKE pattern matching itself literally. */
export function literalLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

async function findDiscoverable(em: EntityManager, principal: WorkspacePrincipal, id: string, lock = false): Promise<Skill> {
  const skill = await em.findOne(
    SkillSchema,
    { $and: [{ id }, discoverableBy(principal)] },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!skill) throw notFound(SKILL_MESSAGES.notFound);
  return skill;
}

export async function listSkills(em: EntityManager, principal: WorkspacePrincipal, query?: string): Promise<SkillView[]> {
  const text = query?.trim();
  const where: FilterQuery<Skill> = text
    ? {
        $and: [
          discoverableBy(principal),
          {
            $or: [
              { name: { $ilike: `%${literalLike(text)}%` } },
              { description: { $ilike: `%${literalLike(text)}%` } },
              { instructions: { $ilike: `%${literalLike(text)}%` } },
            ],
          },
        ],
      }
    : discoverableBy(principal);
  const rows = await em.find(SkillSchema, where, { orderBy: [{ name: 'asc' }, { version: 'desc' }, { id: 'asc' }] });
  return rows.map(skillView);
}

export async function getSkill(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<SkillView> {
  return skillView(await findDiscoverable(em, principal, id));
}

export interface CreateSkillInput {
  name?: string;
  instructions?: string;
  description?: string;
  enabled?: boolean;
  /** Skill markdown: frontmatter name and description, the body as instructions. Explicit fields win. */
  content?: string;
  fileIds?: string[];
}

/** The content fields a create or update writes; undefined keeps the current value. */
interface ContentFields {
  description?: string;
  instructions?: string;
  enabled?: boolean;
  fileIds?: string[];
}

/**
 * Creates a private draft owned by the caller. When the caller already has a working version
 * (draft or pending) or a published skill with that name (case-insensitive), the create is an
 * update of that skill: a draft changes in place, a pending version is archived for a new
 * draft, a published one gets a new draft version.
 */
export async function createSkill(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: CreateSkillInput,
): Promise<{ skill: SkillView; created: boolean }> {
  const parsed = input.content !== undefined ? parseSkillContent(input.content) : undefined;
  const name = input.name?.trim() || parsed?.name;
  const instructions = input.instructions?.trim() ? input.instructions : parsed?.instructions;
  if (!name || !instructions) throw invalidInput(SKILL_MESSAGES.nameAndInstructionsRequired);
  const fields = checkFields({
    description: input.description ?? parsed?.description,
    instructions,
    enabled: input.enabled,
    fileIds: input.fileIds,
  });
  if (name.length > SKILL_LIMITS.nameChars) throw invalidInput(`Skill name must be at most ${SKILL_LIMITS.nameChars} characters.`);
  await checkFiles(em, principal.workspaceId, fields.fileIds);
  for (let attempt = 0; ; attempt++) {
    try {
      return await em.fork().transactional(async (tx) => {
        const sameName = await tx.find(
          SkillSchema,
          {
            workspaceId: principal.workspaceId,
            ownerId: principal.userId,
            name: { $ilike: literalLike(name) },
            publicationStatus: { $in: ['draft', 'pending', 'published'] },
          },
          { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { version: 'desc' } },
        );
        const working = sameName.find((s) => s.publicationStatus !== 'published');
        if (working) return { skill: skillView(await reviseWorking(tx, working, fields)), created: false };
        const published = sameName.find((s) => s.publicationStatus === 'published');
        if (published) return { skill: skillView(await newDraftVersion(tx, published, fields)), created: true };
        const id = newId('skill');
        const row = tx.create(SkillSchema, {
          id,
          workspaceId: principal.workspaceId,
          ownerId: principal.userId,
          lineageId: id,
          name,
          description: fields.description ?? '',
          instructions,
          enabled: fields.enabled ?? true,
          version: 1,
          parentVersionId: null,
          fileIds: fields.fileIds ?? [],
          ...freshDraftState(new Date()),
        });
        return { skill: skillView(row), created: true };
      });
    } catch (err) {
      // A concurrent create of the same name won: the retry finds its draft and updates it.
      if (err instanceof UniqueConstraintViolationException && attempt === 0) continue;
      throw err;
    }
  }
}

export interface SkillPatch {
  enabled?: boolean;
  description?: string;
  instructions?: string;
  fileIds?: string[];
}

/**
 * Owner-only update (no rename). A draft changes in place; a pending version is archived and
 * the answer is the new draft version; a published skill keeps serving the workspace while a
 * content change goes to its draft (created when the lineage has none; 409 while a version
 * awaits review). `enabled` alone switches a published skill in place.
 */
export async function updateSkill(em: EntityManager, principal: WorkspacePrincipal, id: string, patch: SkillPatch): Promise<SkillView> {
  const fields = checkFields(patch);
  await checkFiles(em, principal.workspaceId, fields.fileIds);
  return em.fork().transactional(async (tx) => {
    const skill = await findDiscoverable(tx, principal, id, true);
    if (skill.ownerId !== principal.userId) throw forbidden(SKILL_MESSAGES.ownerOnly);
    if (Object.values(fields).every((v) => v === undefined)) return skillView(skill);
    if (skill.publicationStatus !== 'published') return skillView(await reviseWorking(tx, skill, fields));
    const { enabled, ...content } = fields;
    if (Object.values(content).every((v) => v === undefined)) {
      Object.assign(skill, { enabled, updatedAt: new Date() });
      return skillView(skill);
    }
    const working = await tx.findOne(
      SkillSchema,
      { lineageId: skill.lineageId, publicationStatus: { $in: WORKING } },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (working?.publicationStatus === 'pending') throw conflict(SKILL_MESSAGES.pendingReview);
    if (working) return skillView(await reviseWorking(tx, working, fields));
    return skillView(await newDraftVersion(tx, skill, fields));
  });
}

export async function deleteSkill(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<void> {
  await em.fork().transactional(async (tx) => {
    const skill = await findDiscoverable(tx, principal, id, true);
    if (skill.ownerId !== principal.userId) throw forbidden(SKILL_MESSAGES.ownerOnly);
    if (skill.publicationStatus === 'published') throw conflict(SKILL_MESSAGES.publishedNotDeletable);
    tx.remove(skill);
  });
}

/** A draft changes in place; a pending version is archived and replaced by a new draft version. */
async function reviseWorking(tx: EntityManager, skill: Skill, fields: ContentFields): Promise<Skill> {
  if (skill.publicationStatus === 'pending') {
    const now = new Date();
    await tx.nativeUpdate(SkillSchema, { id: skill.id }, { publicationStatus: 'archived', archivedAt: now, updatedAt: now });
    // Archived before the new draft is inserted: a lineage has one working version at a time.
    return newDraftVersion(tx, { ...skill, publicationStatus: 'archived' }, fields);
  }
  Object.assign(skill, definedOnly(fields), { updatedAt: new Date() });
  return skill;
}

/** A new private draft version of `base`'s lineage, made from `base` with `fields` applied. */
async function newDraftVersion(tx: EntityManager, base: Skill, fields: ContentFields): Promise<Skill> {
  const rows: Array<{ max: number }> = await tx
    .getConnection()
    .execute('select max(version) as max from skills where lineage_id = ?', [base.lineageId], 'all', tx.getTransactionContext());
  return tx.create(SkillSchema, {
    id: newId('skill'),
    workspaceId: base.workspaceId,
    ownerId: base.ownerId,
    lineageId: base.lineageId,
    name: base.name,
    description: fields.description ?? base.description,
    instructions: fields.instructions ?? base.instructions,
    enabled: fields.enabled ?? base.enabled,
    version: Number(rows[0]?.max ?? base.version) + 1,
    parentVersionId: base.id,
    fileIds: fields.fileIds ?? [...base.fileIds],
    ...freshDraftState(new Date()),
  });
}

/** Where every new version starts, the first of a lineage or the next: a private draft nobody has reviewed or used yet. */
function freshDraftState(now: Date) {
  return {
    visibility: 'private',
    publicationStatus: 'draft',
    reviewerId: null,
    reviewRequestedAt: null,
    reviewedAt: null,
    publishedAt: null,
    archivedAt: null,
    usageCount: 0,
    lastUsedAt: null,
    createdAt: now,
    updatedAt: now,
  } as const;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function checkFields(input: ContentFields): ContentFields {
  const out: ContentFields = { ...input };
  if (input.description !== undefined) {
    out.description = input.description.trim();
    if (out.description.length > SKILL_LIMITS.descriptionChars)
      throw invalidInput(`Skill description must be at most ${SKILL_LIMITS.descriptionChars} characters.`);
  }
  if (input.instructions !== undefined) {
    out.instructions = input.instructions.trim();
    if (!out.instructions) throw invalidInput(SKILL_MESSAGES.nameAndInstructionsRequired);
    if (out.instructions.length > SKILL_LIMITS.instructionsChars)
      throw invalidInput(`Skill instructions must be at most ${SKILL_LIMITS.instructionsChars} characters.`);
  }
  if (input.fileIds !== undefined) {
    out.fileIds = [...new Set(input.fileIds)];
    if (out.fileIds.length > SKILL_LIMITS.files) throw invalidInput(`A skill can have at most ${SKILL_LIMITS.files} files.`);
  }
  return out;
}

/** Attached files must be ready files of the workspace (the Files service's rule for attachments). */
async function checkFiles(em: EntityManager, workspaceId: string, fileIds: string[] | undefined): Promise<void> {
  if (!fileIds?.length) return;
  const ready = await readyFilesByIds(em, workspaceId, fileIds);
  const missing = fileIds.find((id) => !ready.has(id));
  if (missing) throw invalidInput(`File ${missing} is not a ready file of this workspace.`);
}
