import { z } from 'zod';
import type { AppContext } from '../context';
import { routeGroup, SESSION_ADMIN, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { answerById } from '../http/handlers';
import { bareAuthErrors, pathId, sessionAdminErrors, idParams } from '../schemas';
import { skillEnvelopeSchema, skillListSchema, skillLoadResultSchema } from '../schemas/skills';
import {
  archiveSkillPublication,
  createSkill,
  deleteSkill,
  getSkill,
  INVALID_LOAD_SHAPE,
  listPendingSkills,
  listSkills,
  loadSkills,
  publishSkill,
  requestSkillPublication,
  rollbackSkill,
  SKILL_LIMITS,
  updateSkill,
} from '../../services/skills';
import { invalidInput, tooLarge } from '../../services/kernel/errors';

const notFound = { 404: '`Skill not found.` (also for other workspaces’ ids and versions the caller may not see)' };
const ownerOnly = { 403: 'Wrong key scope or role, or `Only the skill owner can edit this skill.`' };

/** Skills through a workspace key; writes need a role above viewer. */
const skillRoute = routeGroup({ tags: ['Skills'], family: 'bare', access: WORKSPACE_READ, pathPrefix: '/api/v1/skills' });

/** Publication review through the session (the product UI). */
const sessionSkillRoute = routeGroup({
  tags: ['Skills'],
  family: 'bare',
  access: SESSION_ADMIN,
  errors: sessionAdminErrors,
  pathPrefix: '/api/skills',
});

const description = z
  .string()
  .max(SKILL_LIMITS.descriptionChars, `description must be at most ${SKILL_LIMITS.descriptionChars} characters`);
const instructions = z
  .string()
  .max(SKILL_LIMITS.instructionsChars, `instructions must be at most ${SKILL_LIMITS.instructionsChars} characters`);
const fileIds = z
  .array(pathId)
  .max(SKILL_LIMITS.files, `at most ${SKILL_LIMITS.files} files`)
  .describe('Ready files of the workspace (Files area) to attach; replaces the attached list');

export const listSkillsRoute = skillRoute({
  method: 'get',
  path: '',
  operationId: 'listSkills',
  summary: "Skills the key's user may see: the workspace's published skills and their own drafts and pending versions",
  query: z.object({
    query: z
      .string()
      .max(500, 'query must be at most 500 characters')
      .optional()
      .describe('Case-insensitive substring of name, description or instructions'),
  }),
  responses: { 200: { description: '`{ skills }`, by name', schema: skillListSchema } },
  handler: async (ctx, { principal, query }) => ({ status: 200, body: { skills: await listSkills(ctx.state.em, principal, query.query) } }),
});

export const createSkillRoute = skillRoute({
  method: 'post',
  path: '',
  operationId: 'createSkill',
  summary: "Create a private draft owned by the key's user; the user's own skill of that name (case-insensitive) is updated instead",
  access: WORKSPACE_WRITE,
  body: z.strictObject({
    name: z.string().max(SKILL_LIMITS.nameChars, `name must be at most ${SKILL_LIMITS.nameChars} characters`).optional(),
    instructions: instructions.optional(),
    description: description.optional(),
    enabled: z.boolean().optional().describe('Default true'),
    content: z
      .string()
      .max(SKILL_LIMITS.contentChars, `content must be at most ${SKILL_LIMITS.contentChars} characters`)
      .optional()
      .describe(
        'Skill markdown: YAML frontmatter `name` and `description`, the body as instructions; without a name, the first heading slugified',
      ),
    fileIds: fileIds.optional(),
  }),
  responses: {
    201: { description: '`{ skill }`', schema: skillEnvelopeSchema },
    409: 'The lineage of the same-named skill has a version awaiting review',
  },
  handler: async (ctx, { principal, body }) => ({ status: 201, body: { skill: (await createSkill(ctx.state.em, principal, body)).skill } }),
});

export const getSkillRoute = skillRoute({
  method: 'get',
  path: '/{id}',
  operationId: 'getSkill',
  summary: 'One skill version the caller may see',
  params: idParams,
  responses: { 200: { description: '`{ skill }`', schema: skillEnvelopeSchema }, ...bareAuthErrors, ...notFound },
  handler: answerById('skill', getSkill),
});

export const updateSkillRoute = skillRoute({
  method: 'patch',
  path: '/{id}',
  operationId: 'updateSkill',
  summary:
    'Owner only, no rename. A draft changes in place; a pending version is archived for a new draft version; a published skill keeps serving while the change goes to its draft',
  access: WORKSPACE_WRITE,
  params: idParams,
  body: z.strictObject({
    enabled: z.boolean().optional(),
    description: description.optional(),
    instructions: instructions.optional(),
    fileIds: fileIds.optional(),
  }),
  responses: {
    200: { description: '`{ skill }`: the changed version (a new draft version when one was made)', schema: skillEnvelopeSchema },
    ...ownerOnly,
    ...notFound,
    409: '`This skill already has a version awaiting publication review.`',
  },
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: { skill: await updateSkill(ctx.state.em, principal, params.id, body) },
  }),
});

export const deleteSkillRoute = skillRoute({
  method: 'delete',
  path: '/{id}',
  operationId: 'deleteSkill',
  summary: 'Owner only; published skills cannot be deleted',
  access: WORKSPACE_WRITE,
  params: idParams,
  responses: {
    200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) },
    ...ownerOnly,
    ...notFound,
    409: '`Published skills cannot be deleted. Roll back or archive the publication first.`',
  },
  handler: async (ctx, { principal, params }) => {
    await deleteSkill(ctx.state.em, principal, params.id);
    return { status: 200, body: { deleted: true } };
  },
});

/** The largest load request read; 32 ids of 191 characters with their versions fit many times over. */
const MAX_LOAD_BODY_BYTES = 64 * 1024;

export const loadSkillsRoute = skillRoute({
  method: 'post',
  path: '/load',
  operationId: 'loadSkills',
  summary: 'Progressive load of skills by id or name (workspace key only); counts one use of each loaded skill',
  rawBody: {
    contentType: 'application/json',
    description:
      'Strict JSON object: `skillIds` (≤ 32 ids of ≤ 191 characters), legacy `skillId`, `skillName` (only when no id is given), `versions` (id → positive integer), legacy `version`',
  },
  responses: {
    200: {
      description: '`{ capability, effect, skills, compatibility }`; `Cache-Control: private, no-store`',
      schema: skillLoadResultSchema,
    },
    400: '`Invalid progressive skill load request.` (no code) for a body that is not a load request; `PROGRESSIVE_SKILL_INVALID_REQUEST` for a broken rule',
    404: '`PROGRESSIVE_SKILL_NOT_AVAILABLE`: unknown, unseen or disabled skill, or an attached file that is not ready',
    409: '`PROGRESSIVE_SKILL_VERSION_MISMATCH`',
    413: 'Body over 64 KiB',
  },
  handler: async (ctx, { principal }) => {
    // On every answer, errors included: loaded instructions are private to the caller.
    ctx.set('Cache-Control', 'private, no-store');
    const request = await readStrictJson(ctx);
    return { status: 200, body: await loadSkills(ctx.state.em, principal, request), headers: { 'Cache-Control': 'private, no-store' } };
  },
});

/** The body as one JSON object sent as `application/json`; anything else is not a load request. */
async function readStrictJson(ctx: AppContext): Promise<unknown> {
  if (!ctx.request.is('application/json', '+json')) throw invalidInput(INVALID_LOAD_SHAPE);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_LOAD_BODY_BYTES) throw tooLarge('Request body is too large.');
    chunks.push(chunk);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw invalidInput(INVALID_LOAD_SHAPE);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidInput(INVALID_LOAD_SHAPE);
  return value;
}

const publicationRoute = (
  action: 'request-publication' | 'publish' | 'rollback' | 'archive',
  operationId: string,
  summary: string,
  move: typeof publishSkill,
  roles: 'write' | 'admin',
) =>
  sessionSkillRoute({
    method: 'post',
    path: `/{id}/${action}`,
    operationId,
    summary,
    access: { kind: 'session', roles },
    params: idParams,
    responses: {
      200: { description: '`{ skill }`', schema: skillEnvelopeSchema },
      ...notFound,
      409: 'The skill is not in the state the move starts from',
    },
    handler: async (ctx, { principal, params }) => ({ status: 200, body: { skill: await move(ctx.state.em, principal, params.id) } }),
  });

export const requestSkillPublicationRoute = publicationRoute(
  'request-publication',
  'requestSkillPublication',
  'The owner submits a draft for publication review (draft → pending); 409 `This skill already has a version awaiting publication review.`',
  requestSkillPublication,
  'write',
);
export const publishSkillRoute = publicationRoute(
  'publish',
  'publishSkill',
  "Admin or Owner: publish a pending version to the workspace; the lineage's previous published version is archived",
  publishSkill,
  'admin',
);
export const rollbackSkillRoute = publicationRoute(
  'rollback',
  'rollbackSkill',
  "Admin or Owner: archive a published version and publish the lineage's previous published version again",
  rollbackSkill,
  'admin',
);
export const archiveSkillPublicationRoute = publicationRoute(
  'archive',
  'archiveSkillPublication',
  'Admin or Owner: archive a published skill (it leaves the workspace)',
  archiveSkillPublication,
  'admin',
);

export const listPendingSkillsRoute = sessionSkillRoute({
  method: 'get',
  path: '/reviews',
  operationId: 'listPendingSkills',
  summary: 'Admin or Owner: the versions of the workspace awaiting publication review, oldest request first',
  responses: { 200: { description: '`{ skills }`', schema: skillListSchema } },
  handler: async (ctx, { principal }) => ({ status: 200, body: { skills: await listPendingSkills(ctx.state.em, principal) } }),
});

export const skillRoutes = [
  listSkillsRoute,
  createSkillRoute,
  loadSkillsRoute,
  getSkillRoute,
  updateSkillRoute,
  deleteSkillRoute,
  listPendingSkillsRoute,
  requestSkillPublicationRoute,
  publishSkillRoute,
  rollbackSkillRoute,
  archiveSkillPublicationRoute,
];
