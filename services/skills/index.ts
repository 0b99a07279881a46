/**
 * The skills area: versions, visibility and CRUD (skills.ts), skill markdown (content.ts),
 * publication moves (publication.ts) and progressive load (load.ts: `loadSkills`, also the
 * `skills.load` capability other areas' agents call).
 */
export {
  createSkill,
  type CreateSkillInput,
  deleteSkill,
  discoverableBy,
  getSkill,
  listSkills,
  literalLike,
  SKILL_LIMITS,
  SKILL_MESSAGES,
  type SkillPatch,
  skillView,
  type SkillView,
  updateSkill,
} from './skills';
export { parseSkillContent, type SkillContent } from './content';
export {
  archiveSkillPublication,
  listPendingSkills,
  PUBLICATION_MESSAGES,
  publishSkill,
  requestSkillPublication,
  rollbackSkill,
} from './publication';
export {
  INVALID_LOAD_SHAPE,
  LOAD_CODES,
  LOAD_LIMITS,
  type LoadedSkill,
  type LoadedSkillFile,
  loadSkills,
  type SkillLoadRequest,
  skillLoadRequestShape,
  type SkillLoadResult,
} from './load';
