import { EntitySchema } from '@mikro-orm/core';

/** A group of workspaces; organization keys belong to one. */
export interface Organization {
  id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Which organization a workspace is in (exactly one: its own, made on first use, until it joins another). */
export interface OrganizationWorkspace {
  workspaceId: string;
  organizationId: string;
  joinedAt: Date;
}

export const OrganizationSchema = new EntitySchema<Organization>({
  name: 'Organization',
  tableName: 'organizations',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const OrganizationWorkspaceSchema = new EntitySchema<OrganizationWorkspace>({
  name: 'OrganizationWorkspace',
  tableName: 'organization_workspaces',
  properties: {
    workspaceId: { type: 'string', primary: true, fieldName: 'workspace_id' },
    organizationId: { type: 'string', fieldName: 'organization_id' },
    joinedAt: { type: 'Date', fieldName: 'joined_at', columnType: 'timestamptz' },
  },
});
