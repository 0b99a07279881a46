import { z } from 'zod';
import { isoDate, timestampFields } from './index';
import { SKILL_PUBLICATION_STATUSES, SKILL_VISIBILITIES } from '../../engine/statuses';

/** Response schemas of the skills area. */

export const skillSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    ownerId: z.string().nullable(),
    name: z.string(),
    description: z.string(),
    instructions: z.string(),
    enabled: z.boolean(),
    visibility: z.enum(SKILL_VISIBILITIES),
    publicationStatus: z.enum(SKILL_PUBLICATION_STATUSES),
    version: z.number().int().min(1),
    parentVersionId: z.string().nullable().describe('The version this one was made from; null for version 1'),
    fileIds: z.array(z.string()).describe('Ready files of the workspace attached to this version (see the Files area)'),
    reviewerId: z.string().nullable().describe('Who published (or rolled back to) this version'),
    reviewRequestedAt: isoDate.nullable(),
    reviewedAt: isoDate.nullable(),
    publishedAt: isoDate.nullable(),
    usageCount: z.number().int().min(0),
    lastUsedAt: isoDate.nullable(),
    ...timestampFields,
  })
  .meta({ id: 'Skill' });

export const skillEnvelopeSchema = z.strictObject({ skill: skillSchema });
export const skillListSchema = z.strictObject({ skills: z.array(skillSchema) });

export const loadedSkillSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    description: z.string(),
    instructions: z.string(),
    version: z.number().int().min(1),
    files: z.array(
      z.strictObject({
        id: z.string(),
        name: z.string(),
        mimeType: z.string(),
        sizeBytes: z.number().int().min(0),
        sha256: z.string(),
        status: z.literal('ready'),
      }),
    ),
  })
  .meta({ id: 'LoadedSkill' });

export const skillLoadResultSchema = z.strictObject({
  capability: z.literal('skills.load'),
  effect: z.literal('read-only'),
  skills: z.array(loadedSkillSchema),
  compatibility: z.strictObject({
    usedLegacyFields: z.array(z.enum(['skillId', 'version'])).describe('Legacy request fields the request used'),
  }),
});
