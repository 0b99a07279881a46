import { z } from 'zod';
import { routeGroup, ANY_KEY_READ } from '../http/route';
import { redactionSchema, workspaceSchema } from '../schemas';
import { getWorkspace, INVITABLE_ROLES } from '../../services/accounts/workspaces';
import { inviteMember } from '../../services/accounts/invitations';
import { invitationSchema } from '../schemas/invitations';
import { projectFor } from '../../services/kernel/redaction';

const workspaceRoute = routeGroup({ tags: ['Workspaces'], family: 'bare', access: ANY_KEY_READ });

export const getWorkspaceRoute = workspaceRoute({
  method: 'get',
  path: '/api/v1/workspaces',
  operationId: 'getWorkspace',
  summary: "The API key's workspace",
  responses: {
    200: {
      description: 'The workspace',
      schema: z.strictObject({ workspace: workspaceSchema.extend({ redaction: redactionSchema.optional() }) }),
    },
    404: 'Workspace not found',
  },
  handler: async (ctx, { principal }) => {
    const workspace = await getWorkspace(ctx.state.em, principal);
    // Workspace metadata has nothing restricted, but safe principals still get the marker.
    return { status: 200, body: { workspace: projectFor(principal, { ...workspace }, []) } };
  },
});

const addMemberBody = z.object({
  email: z.string({ error: 'email is required' }).trim().min(1, 'email is required').pipe(z.email('email must be a valid email address')),
  role: z.enum(INVITABLE_ROLES, { error: 'role must be one of admin, member, viewer' }),
});

export const addMemberRoute = workspaceRoute({
  method: 'post',
  path: '/api/v1/workspace-members',
  operationId: 'addWorkspaceMember',
  summary: 'Invite a member (Admin or Owner, workspace key); the invitee accepts with their own session',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'admin' },
  body: addMemberBody,
  idempotency: 'optional',
  responses: {
    201: {
      description: 'Invitation created (or renewed); the same answer whether or not the email is registered',
      schema: z.strictObject({ invitation: invitationSchema, invited: z.literal(true) }),
    },
    409: 'Already a member, or Idempotency-Key reused with another body',
  },
  handler: async (ctx, { principal, body }) => ({ status: 201, body: await inviteMember(ctx.state.em, principal, body) }),
});

export const workspaceRoutes = [getWorkspaceRoute, addMemberRoute];
