import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamps, timestamptz } from './columns';
import { workspaceOwned } from './workspaces';
import type { SkillVisibility, SkillPublicationStatus } from '../../engine/statuses';
export type { SkillVisibility, SkillPublicationStatus } from '../../engine/statuses';

export const SkillSchema = entity('Skill', 'skills', {
  /** `skill_…`. */
  ...workspaceOwned(),
  /** The user who created the lineage; only they edit or delete it. */
  ownerId: p.string().nullable(),
  lineageId: p.string(),
  name: p.text(),
  description: p.text(),
  instructions: p.text(),
  enabled: p.boolean(),
  visibility: p.string().$type<SkillVisibility>(),
  publicationStatus: p.string().$type<SkillPublicationStatus>(),
  version: p.integer(),
  parentVersionId: p.string().nullable(),
  /** Ids of files (services/files) attached to this version, in order. */
  fileIds: p.json<string[]>(),
  reviewerId: p.string().nullable(),
  reviewRequestedAt: timestamptz('review_requested_at').nullable(),
  reviewedAt: timestamptz('reviewed_at').nullable(),
  publishedAt: timestamptz('published_at').nullable(),
  archivedAt: timestamptz('archived_at').nullable(),
  usageCount: p.integer(),
  lastUsedAt: timestamptz('last_used_at').nullable(),
  ...timestamps(),
});
/**
 * One version of a skill. The versions of one skill share `lineageId` (the id of its version 1)
 * and point at the version they were made from (`parentVersionId`). A lineage has at most one
 * working version (`draft` or `pending`, always private) and at most one `published` version
 * (visibility `workspace`); every other version is `archived`. Unique partial indexes in the
 * migration hold these rules under concurrency.
 */
export type Skill = InferEntity<typeof SkillSchema>;
