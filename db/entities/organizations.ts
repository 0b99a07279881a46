import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamps, timestamptz } from './columns';

export const OrganizationSchema = entity('Organization', 'organizations', {
  id: p.string().primary(),
  name: p.string(),
  ...timestamps(),
});
/** A group of workspaces; organization keys belong to one. */
export type Organization = InferEntity<typeof OrganizationSchema>;

export const OrganizationWorkspaceSchema = entity('OrganizationWorkspace', 'organization_workspaces', {
  workspaceId: p.string().primary(),
  organizationId: p.string(),
  joinedAt: timestamptz('joined_at'),
});
/** Which organization a workspace is in (exactly one: its own, made on first use, until it joins another). */
export type OrganizationWorkspace = InferEntity<typeof OrganizationWorkspaceSchema>;
