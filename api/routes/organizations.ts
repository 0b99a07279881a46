import { z } from 'zod';
import { routeGroup, SESSION_ADMIN } from '../http/route';
import { pathId } from '../schemas';
import {
  addWorkspaceToOrganization,
  getOrganization,
  renameOrganization,
  type OrganizationView,
} from '../../services/accounts/organizations';
import type { SessionPrincipal } from '../../services/kernel/principal';

/**
 * The session workspace's organization (session routes, like key management): read and rename
 * (Admin or Owner), and bring another workspace in (Owner of both).
 */
export const organizationSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  workspaces: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  createdAt: z.string(),
  updatedAt: z.string(),
});
/** What each organization route answers: 200 and the organization as it stands after the call. */
const answered = { 200: { description: '`{ organization }`', schema: z.strictObject({ organization: organizationSchema }) } };
const answer = async (organization: Promise<OrganizationView>) => ({ status: 200, body: { organization: await organization } });
const organizationRoute = routeGroup({
  tags: ['Organizations'],
  family: 'bare',
  access: SESSION_ADMIN,
  errors: {
    401: 'Sign-in is required',
    403: 'Admin or Owner role required (Owner of both workspaces to add one), or cross-origin',
  },
  pathPrefix: '/api/organization',
});

export const organizationRoutes = [
  organizationRoute({
    method: 'get',
    path: '',
    operationId: 'getOrganization',
    summary: "The session workspace's organization and its workspaces (Admin or Owner)",
    responses: answered,
    handler: (ctx, { principal }) => answer(getOrganization(ctx.state.em, principal as SessionPrincipal)),
  }),
  organizationRoute({
    method: 'patch',
    path: '',
    operationId: 'renameOrganization',
    summary: 'Rename the organization (Admin or Owner)',
    body: z.object({ name: z.string({ error: 'name is required' }).max(200) }).strict(),
    responses: { ...answered, 400: 'Blank name' },
    handler: (ctx, { principal, body }) => answer(renameOrganization(ctx.state.em, principal as SessionPrincipal, body.name)),
  }),
  organizationRoute({
    method: 'post',
    path: '/workspaces',
    operationId: 'addOrganizationWorkspace',
    summary:
      'Bring another workspace into this organization (Owner of both); it leaves its previous organization, whose keys stop reaching it',
    body: z.object({ workspaceId: pathId }).strict(),
    responses: { ...answered, 404: 'Not a workspace of yours' },
    handler: (ctx, { principal, body }) =>
      answer(addWorkspaceToOrganization(ctx.state.em, principal as SessionPrincipal, body.workspaceId)),
  }),
];
