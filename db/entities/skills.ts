import { EntitySchema } from '@mikro-orm/core';

export const SKILL_VISIBILITIES = ['private', 'workspace'] as const;
export type SkillVisibility = (typeof SKILL_VISIBILITIES)[number];
export const SKILL_PUBLICATION_STATUSES = ['draft', 'pending', 'published', 'archived'] as const;
export type SkillPublicationStatus = (typeof SKILL_PUBLICATION_STATUSES)[number];

/**
 * One version of a skill. The versions of one skill share `lineageId` (the id of its version 1)
 * and point at the version they were made from (`parentVersionId`). A lineage has at most one
 * working version (`draft` or `pending`, always private) and at most one `published` version
 * (visibility `workspace`); every other version is `archived`. Unique partial indexes in the
 * migration hold these rules under concurrency.
 */
export interface Skill {
  /** `skill_…`. */
  id: string;
  workspaceId: string;
  /** The user who created the lineage; only they edit or delete it. */
  ownerId: string | null;
  lineageId: string;
  name: string;
  description: string;
  instructions: string;
  enabled: boolean;
  visibility: SkillVisibility;
  publicationStatus: SkillPublicationStatus;
  version: number;
  parentVersionId: string | null;
  /** Ids of files (services/files) attached to this version, in order. */
  fileIds: string[];
  reviewerId: string | null;
  reviewRequestedAt: Date | null;
  reviewedAt: Date | null;
  publishedAt: Date | null;
  archivedAt: Date | null;
  usageCount: number;
  lastUsedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const SkillSchema = new EntitySchema<Skill>({
  name: 'Skill',
  tableName: 'skills',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    ownerId: { type: 'string', fieldName: 'owner_id', nullable: true },
    lineageId: { type: 'string', fieldName: 'lineage_id' },
    name: { type: 'text' },
    description: { type: 'text' },
    instructions: { type: 'text' },
    enabled: { type: 'boolean' },
    visibility: { type: 'string' },
    publicationStatus: { type: 'string', fieldName: 'publication_status' },
    version: { type: 'integer' },
    parentVersionId: { type: 'string', fieldName: 'parent_version_id', nullable: true },
    fileIds: { type: 'json', fieldName: 'file_ids' },
    reviewerId: { type: 'string', fieldName: 'reviewer_id', nullable: true },
    reviewRequestedAt: { type: 'Date', fieldName: 'review_requested_at', columnType: 'timestamptz', nullable: true },
    reviewedAt: { type: 'Date', fieldName: 'reviewed_at', columnType: 'timestamptz', nullable: true },
    publishedAt: { type: 'Date', fieldName: 'published_at', columnType: 'timestamptz', nullable: true },
    archivedAt: { type: 'Date', fieldName: 'archived_at', columnType: 'timestamptz', nullable: true },
    usageCount: { type: 'integer', fieldName: 'usage_count' },
    lastUsedAt: { type: 'Date', fieldName: 'last_used_at', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
