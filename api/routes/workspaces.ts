import { z } from 'zod';
import { defineRoute } from '../http/route';
import { bareAuthErrors, bareErrorSchema, isoDate, redactionSchema, roleSchema, userSchema, workspaceSchema } from '../schemas';
import { addMember, getWorkspace, INVITABLE_ROLES } from '../../services/workspaces';
import { projectFor } from '../../services/redaction';

export const getWorkspaceRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workspaces',
  operationId: 'getWorkspace',
  summary: "The API key's workspace",
  tags: ['Workspaces'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  responses: {
    200: { description: 'The workspace', schema: z.strictObject({ workspace: workspaceSchema.extend({ redaction: redactionSchema.optional() }) }) },
    ...bareAuthErrors,
    404: { description: 'Workspace not found', schema: bareErrorSchema },
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

export const addMemberRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workspace-members',
  operationId: 'addWorkspaceMember',
  summary: 'Add or invite a member (Admin or Owner, workspace key)',
  tags: ['Workspaces'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'admin' },
  body: addMemberBody,
  idempotency: 'optional',
  responses: {
    201: {
      description: 'Member added; an unknown email becomes an invited user',
      schema: z.strictObject({
        member: z.strictObject({ workspaceId: z.string(), userId: z.string(), role: roleSchema, createdAt: isoDate, user: userSchema }),
        invited: z.boolean(),
      }),
    },
    ...bareAuthErrors,
    409: { description: 'Already a member, or Idempotency-Key reused with another body', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, body }) => {
    const result = await addMember(ctx.state.em, principal, body);
    return { status: 201, body: result };
  },
});

export const workspaceRoutes = [getWorkspaceRoute, addMemberRoute];
