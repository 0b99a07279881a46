/**
 * Progressive skill load (`POST /api/v1/skills/load`, and the `skills.load` tool of agents): an
 * agent knows skills by id or name and loads their instructions and file references when it
 * needs them. Read-only for the skills' content; each load counts one use of every skill it
 * returned (usageCount + 1 and lastUsedAt, in one atomic UPDATE, so concurrent loads all count).
 *
 * Request: `skillIds` (up to 32 ids of at most 191 characters, duplicates skipped), legacy
 * `skillId` (added after them), `skillName` (used only when no id selector remains), `versions`
 * (id → expected version) and legacy `version` (the expected version of the one requested skill).
 * A skill loads when the caller may see it (services/skills/skills.ts) and it is enabled, and
 * every file attached to it is a ready file of the workspace.
 */
import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { SkillSchema, type ReadyFileRef, type Skill } from '../../db/entities';
import { invalidInput, notFound, conflict } from '../kernel/errors';
import { readyFileRef, readyFilesByIds } from '../files';
import type { WorkspacePrincipal } from '../kernel/principal';
import { findUnstorableText } from '../kernel/storableText';
import { discoverableBy, literalLike, SKILL_LIMITS } from './skills';
import { countSkillUses } from './store';

export const LOAD_LIMITS = { ids: 32, idChars: 191 } as const;

export const LOAD_CODES = {
  invalidRequest: 'PROGRESSIVE_SKILL_INVALID_REQUEST',
  versionMismatch: 'PROGRESSIVE_SKILL_VERSION_MISMATCH',
  notAvailable: 'PROGRESSIVE_SKILL_NOT_AVAILABLE',
} as const;

/** The spec's message for a body that is not a load request at all (no code). */
export const INVALID_LOAD_SHAPE = 'Invalid progressive skill load request.';

/** The shape: types and known fields only; the rules (counts, lengths, selectors) are checked after, with a code. */
export const skillLoadRequestShape = z.strictObject({
  skillIds: z.array(z.string()).optional(),
  skillId: z.string().optional(),
  skillName: z.string().optional(),
  versions: z.record(z.string(), z.number()).optional(),
  version: z.number().optional(),
});
export type SkillLoadRequest = z.infer<typeof skillLoadRequestShape>;

export type LoadedSkillFile = ReadyFileRef;

export interface LoadedSkill {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  instructions: string;
  version: number;
  files: LoadedSkillFile[];
}

export interface SkillLoadResult {
  capability: 'skills.load';
  effect: 'read-only';
  skills: LoadedSkill[];
  compatibility: { usedLegacyFields: string[] };
}

const invalidRequest = (message: string) => invalidInput(message, { code: LOAD_CODES.invalidRequest });
const notAvailable = (message: string) => notFound(message, { code: LOAD_CODES.notAvailable });

/**
 * Loads skills for `principal`'s workspace. `request` is the raw request (a parsed JSON body or
 * an agent's tool input); it is validated here, so every caller gets the same answers.
 */
export async function loadSkills(em: EntityManager, principal: WorkspacePrincipal, request: unknown): Promise<SkillLoadResult> {
  const parsed = skillLoadRequestShape.safeParse(request);
  if (!parsed.success) throw invalidInput(INVALID_LOAD_SHAPE);
  const plan = planLoad(parsed.data);
  const skills = plan.ids.length > 0 ? await skillsById(em, principal, plan.ids) : [await skillByName(em, principal, plan.name!)];
  for (const skill of skills) {
    const expected = plan.versions.get(skill.id) ?? (plan.nameVersion !== undefined ? plan.nameVersion : undefined);
    if (expected !== undefined && expected !== skill.version) {
      throw conflict(`Skill ${skill.id} is at version ${skill.version}, not version ${expected}.`, { code: LOAD_CODES.versionMismatch });
    }
  }
  const files = await readyFilesByIds(
    em,
    principal.workspaceId,
    skills.flatMap((s) => s.fileIds),
  );
  const loaded = skills.map((skill): LoadedSkill => {
    const missing = skill.fileIds.find((id) => !files.has(id));
    if (missing) throw notAvailable(`A file of skill ${skill.id} is not available.`);
    return {
      id: skill.id,
      workspaceId: skill.workspaceId,
      name: skill.name,
      description: skill.description,
      instructions: skill.instructions,
      version: skill.version,
      files: skill.fileIds.map((id) => {
        const f = files.get(id)!;
        return readyFileRef(f);
      }),
    };
  });
  await countUses(
    em,
    loaded.map((s) => s.id),
  );
  return { capability: 'skills.load', effect: 'read-only', skills: loaded, compatibility: { usedLegacyFields: plan.usedLegacyFields } };
}

interface LoadPlan {
  /** Ids in request order, duplicates skipped. */
  ids: string[];
  name?: string;
  versions: Map<string, number>;
  /** The legacy `version` of a load by name. */
  nameVersion?: number;
  usedLegacyFields: string[];
}

function planLoad(req: SkillLoadRequest): LoadPlan {
  const unstorable = findUnstorableText(req, { maxDepth: 4 });
  if (unstorable) throw invalidRequest(`Skill load request field ${unstorable.path || 'body'} ${unstorable.problem}.`);
  const usedLegacyFields = (['skillId', 'version'] as const).filter((f) => req[f] !== undefined);
  const requested = [...(req.skillIds ?? [])];
  if (requested.length > LOAD_LIMITS.ids) throw invalidRequest(`At most ${LOAD_LIMITS.ids} skill ids can be loaded at once.`);
  if (req.skillId !== undefined) requested.push(req.skillId);
  for (const id of requested) {
    if (id.trim() === '' || id.length > LOAD_LIMITS.idChars)
      throw invalidRequest(`Skill ids must be non-empty and at most ${LOAD_LIMITS.idChars} characters.`);
  }
  const ids = [...new Set(requested)];
  const name = req.skillName?.trim();
  if (ids.length === 0 && !name) throw invalidRequest('Name the skills to load with skillIds, skillId or skillName.');
  if (ids.length === 0 && name!.length > SKILL_LIMITS.nameChars)
    throw invalidRequest(`skillName must be at most ${SKILL_LIMITS.nameChars} characters.`);

  const versions = new Map<string, number>();
  for (const [id, v] of Object.entries(req.versions ?? {})) {
    if (!ids.includes(id)) throw invalidRequest(`versions names skill ${id}, which is not requested.`);
    versions.set(id, positiveVersion(v));
  }
  let nameVersion: number | undefined;
  if (req.version !== undefined) {
    const v = positiveVersion(req.version);
    // The legacy version belongs to the legacy id, or to the one skill requested.
    const target = req.skillId ?? (ids.length === 1 ? ids[0] : ids.length === 0 ? null : undefined);
    if (target === undefined) throw invalidRequest('The legacy version field needs exactly one requested skill; use versions for several.');
    if (target === null) nameVersion = v;
    else {
      if (versions.has(target) && versions.get(target) !== v) throw invalidRequest(`version and versions disagree about skill ${target}.`);
      versions.set(target, v);
    }
  }
  return { ids, name: ids.length === 0 ? name : undefined, versions, nameVersion, usedLegacyFields };
}

function positiveVersion(v: number): number {
  if (!Number.isSafeInteger(v) || v < 1) throw invalidRequest('Skill versions must be positive integers.');
  return v;
}

/** The requested skills in request order; any one not loadable fails the whole load. */
async function skillsById(em: EntityManager, principal: WorkspacePrincipal, ids: string[]): Promise<Skill[]> {
  const rows = await em.find(SkillSchema, { $and: [{ id: { $in: ids } }, discoverableBy(principal)] });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const skill = byId.get(id);
    if (!skill || !skill.enabled) throw notAvailable(`Skill ${id} is not available.`);
    return skill;
  });
}

/** By name (case-insensitive): the workspace's published skill first, else the caller's own working version. */
async function skillByName(em: EntityManager, principal: WorkspacePrincipal, name: string): Promise<Skill> {
  const rows = await em.find(SkillSchema, { $and: [{ name: { $ilike: literalLike(name) }, enabled: true }, discoverableBy(principal)] });
  const skill = rows.find((r) => r.publicationStatus === 'published') ?? rows.sort((a, b) => b.version - a.version)[0];
  if (!skill) throw notAvailable(`No available skill is named ${name}.`);
  return skill;
}

/** One atomic increment per load: concurrent loads never lose a count. */
async function countUses(em: EntityManager, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await countSkillUses(em, ids);
}
