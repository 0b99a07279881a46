/**
 * Publication moves of a skill (session routes): the owner requests review of a draft, an Admin
 * or Owner publishes the pending version (the lineage's previous published version is archived),
 * rolls a published skill back to the lineage's previous published version, or archives the
 * publication. Each move is one transaction over locked rows; the partial unique indexes of the
 * skills table refuse a second published or working version of a lineage.
 */
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { SkillSchema, type Skill } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { conflict, forbidden, notFound } from '../kernel/errors';
import type { WorkspacePrincipal } from '../kernel/principal';
import { discoverableBy, literalLike, SKILL_MESSAGES, skillView, type SkillView } from './skills';

export const PUBLICATION_MESSAGES = {
  ownerOnlyRequest: 'Only the skill owner can request publication.',
  notDraft: 'Only a draft skill can be submitted for publication review.',
  notPending: 'Only a skill awaiting publication review can be published.',
  notPublished: 'Only a published skill can be rolled back or archived.',
  noEarlierVersion: 'This skill has no earlier published version to roll back to.',
  nameTaken: (name: string) => `Another published skill of this workspace is named ${name}.`,
} as const;

/** The versions of the workspace awaiting publication review, oldest request first (for reviewers). */
export async function listPendingSkills(em: EntityManager, principal: WorkspacePrincipal): Promise<SkillView[]> {
  const rows = await em.find(
    SkillSchema,
    { workspaceId: principal.workspaceId, publicationStatus: 'pending' },
    { orderBy: [{ reviewRequestedAt: 'asc' }, { id: 'asc' }] },
  );
  return rows.map(skillView);
}

/** draft → pending (owner only). */
export async function requestSkillPublication(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<SkillView> {
  return em.fork().transactional(async (tx) => {
    const skill = await tx.findOne(SkillSchema, { $and: [{ id }, discoverableBy(principal)] }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!skill) throw notFound(SKILL_MESSAGES.notFound);
    if (skill.ownerId !== principal.userId) throw forbidden(PUBLICATION_MESSAGES.ownerOnlyRequest);
    if (skill.publicationStatus === 'pending') throw conflict(SKILL_MESSAGES.pendingReview);
    if (skill.publicationStatus !== 'draft') throw conflict(PUBLICATION_MESSAGES.notDraft);
    const now = new Date();
    Object.assign(skill, { publicationStatus: 'pending', reviewRequestedAt: now, updatedAt: now });
    audit(tx, principal, 'skill.request_publication', skill);
    return skillView(skill);
  });
}

/** pending → published (Admin or Owner; the route checks the role). */
export async function publishSkill(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<SkillView> {
  return em.fork().transactional(async (tx) => {
    const skill = await lockedInWorkspace(tx, principal, id);
    if (skill.publicationStatus !== 'pending') throw conflict(PUBLICATION_MESSAGES.notPending);
    await refuseTakenName(tx, skill);
    await publishVersion(tx, principal, skill, 'first');
    audit(tx, principal, 'skill.publish', skill);
    return reread(tx, skill.id);
  });
}

/** published → archived, and the lineage's previous published version published again (Admin or Owner). */
export async function rollbackSkill(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<SkillView> {
  return em.fork().transactional(async (tx) => {
    const skill = await lockedInWorkspace(tx, principal, id);
    if (skill.publicationStatus !== 'published') throw conflict(PUBLICATION_MESSAGES.notPublished);
    const previous = await tx.findOne(
      SkillSchema,
      { lineageId: skill.lineageId, publicationStatus: 'archived', publishedAt: { $ne: null }, version: { $lt: skill.version } },
      { orderBy: { version: 'desc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!previous) throw conflict(PUBLICATION_MESSAGES.noEarlierVersion);
    await refuseTakenName(tx, previous, skill.id);
    await publishVersion(tx, principal, previous, 'again');
    audit(tx, principal, 'skill.rollback', previous, { fromVersionId: skill.id, fromVersion: skill.version });
    return reread(tx, previous.id);
  });
}

/** published → archived: the lineage is no longer published (Admin or Owner). */
export async function archiveSkillPublication(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<SkillView> {
  return em.fork().transactional(async (tx) => {
    const skill = await lockedInWorkspace(tx, principal, id);
    if (skill.publicationStatus !== 'published') throw conflict(PUBLICATION_MESSAGES.notPublished);
    await archivePublished(tx, skill.lineageId, new Date());
    audit(tx, principal, 'skill.archive', skill);
    return reread(tx, skill.id);
  });
}

/**
 * Makes `version` its lineage's published version, reviewed by `principal` now; the version
 * published until then is archived first. A version published `again` (a rollback) leaves the
 * archive and keeps the date of its first publication.
 */
async function publishVersion(tx: EntityManager, principal: WorkspacePrincipal, version: Skill, time: 'first' | 'again'): Promise<void> {
  const now = new Date();
  await archivePublished(tx, version.lineageId, now);
  await tx.nativeUpdate(
    SkillSchema,
    { id: version.id },
    {
      publicationStatus: 'published',
      visibility: 'workspace',
      reviewerId: principal.userId,
      reviewedAt: now,
      updatedAt: now,
      ...(time === 'first' ? { publishedAt: now } : { archivedAt: null }),
    },
  );
}

/**
 * Reviewers act on any non-archived version of their workspace (a pending version is private
 * to its owner everywhere else); other workspaces' ids are not found.
 */
async function lockedInWorkspace(tx: EntityManager, principal: WorkspacePrincipal, id: string): Promise<Skill> {
  const skill = await tx.findOne(
    SkillSchema,
    { id, workspaceId: principal.workspaceId, publicationStatus: { $ne: 'archived' } },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  if (!skill) throw notFound(SKILL_MESSAGES.notFound);
  return skill;
}

/** One audit record per move, committed with it. */
function audit(tx: EntityManager, principal: WorkspacePrincipal, action: string, skill: Skill, extra: Record<string, unknown> = {}): void {
  recordAudit(tx, principal, {
    action,
    severity: 'info',
    workspaceId: skill.workspaceId,
    targetType: 'skill',
    targetId: skill.id,
    metadata: { name: skill.name, version: skill.version, ...extra },
  });
}

async function archivePublished(tx: EntityManager, lineageId: string, now: Date): Promise<void> {
  await tx.nativeUpdate(
    SkillSchema,
    { lineageId, publicationStatus: 'published' },
    { publicationStatus: 'archived', visibility: 'private', archivedAt: now, updatedAt: now },
  );
}

/** One published skill per name in a workspace, so a load by name is unambiguous. */
async function refuseTakenName(tx: EntityManager, skill: Skill, exceptId?: string): Promise<void> {
  const other = await tx.findOne(SkillSchema, {
    workspaceId: skill.workspaceId,
    publicationStatus: 'published',
    lineageId: { $ne: skill.lineageId },
    name: { $ilike: literalLike(skill.name) },
    ...(exceptId ? { id: { $ne: exceptId } } : {}),
  });
  if (other) throw conflict(PUBLICATION_MESSAGES.nameTaken(skill.name));
}

async function reread(tx: EntityManager, id: string): Promise<SkillView> {
  const row = await tx.findOneOrFail(SkillSchema, { id }, { refresh: true });
  return skillView(row);
}
