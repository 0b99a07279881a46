import { z } from 'zod';
import { defineRoute } from '../http/route';
import { bareErrorSchema, pathId } from '../schemas';
import { addWorkspaceToOrganization, getOrganization, renameOrganization } from '../../services/accounts/organizations';
import type { SessionPrincipal } from '../../services/kernel/principal';

/**
 * The session workspace's organization (session routes, like key management): read and rename
 * (Admin or Owner), and bring another workspace in (Owner of both).
 */
const organizationSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  workspaces: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const envelope = z.strictObject({ organization: organizationSchema });
const sessionErrors = {
  401: { description: 'Sign-in is required', schema: bareErrorSchema },
  403: { description: 'Admin or Owner role required (Owner of both workspaces to add one), or cross-origin', schema: bareErrorSchema },
};
const tags = ['Organizations'];

export const organizationRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/organization',
    operationId: 'getOrganization',
    summary: "The session workspace's organization and its workspaces (Admin or Owner)",
    tags,
    family: 'bare',
    access: { kind: 'session', roles: 'admin' },
    responses: { 200: { description: '`{ organization }`', schema: envelope }, ...sessionErrors },
    handler: async (ctx, { principal }) => ({
      status: 200,
      body: { organization: await getOrganization(ctx.state.em, principal as SessionPrincipal) },
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/organization',
    operationId: 'renameOrganization',
    summary: 'Rename the organization (Admin or Owner)',
    tags,
    family: 'bare',
    access: { kind: 'session', roles: 'admin' },
    body: z.object({ name: z.string({ error: 'name is required' }).max(200) }).strict(),
    responses: {
      200: { description: '`{ organization }`', schema: envelope },
      400: { description: 'Blank name', schema: bareErrorSchema },
      ...sessionErrors,
    },
    handler: async (ctx, { principal, body }) => ({
      status: 200,
      body: { organization: await renameOrganization(ctx.state.em, principal as SessionPrincipal, body.name) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/organization/workspaces',
    operationId: 'addOrganizationWorkspace',
    summary:
      'Bring another workspace into this organization (Owner of both); it leaves its previous organization, whose keys stop reaching it',
    tags,
    family: 'bare',
    access: { kind: 'session', roles: 'admin' },
    body: z.object({ workspaceId: pathId }).strict(),
    responses: {
      200: { description: '`{ organization }`', schema: envelope },
      ...sessionErrors,
      404: { description: 'Not a workspace of yours', schema: bareErrorSchema },
    },
    handler: async (ctx, { principal, body }) => ({
      status: 200,
      body: { organization: await addWorkspaceToOrganization(ctx.state.em, principal as SessionPrincipal, body.workspaceId) },
    }),
  }),
];
