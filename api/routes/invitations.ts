import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route';
import { bareErrorSchema, pathId } from '../schemas';
import { invitationSchema, receivedInvitationSchema } from '../schemas/invitations';
import { decideInvitation, listReceivedInvitations } from '../../services/accounts/invitations';
import type { SessionPrincipal } from '../../services/kernel/principal';

/** The invitee's side of workspace invitations: their own session only, never an API key. */
const sessionErrors = {
  401: { description: 'Sign-in is required', schema: bareErrorSchema },
  403: { description: 'Cross-origin request refused', schema: bareErrorSchema },
};

export const listInvitationsRoute = defineRoute({
  method: 'get',
  path: '/api/invitations',
  operationId: 'listReceivedInvitations',
  summary: "The signed-in user's pending invitations to other workspaces",
  tags: ['Workspaces'],
  family: 'bare',
  access: { kind: 'session', roles: 'read' },
  responses: {
    200: { description: 'Pending invitations, newest first', schema: z.strictObject({ invitations: z.array(receivedInvitationSchema) }) },
    ...sessionErrors,
  },
  handler: async (ctx, { principal }) => ({
    status: 200,
    body: { invitations: await listReceivedInvitations(ctx.state.em, principal as SessionPrincipal) },
  }),
});

const decisionRoute = (decision: 'accept' | 'decline') =>
  defineRoute({
    method: 'post',
    path: `/api/invitations/{id}/${decision}`,
    operationId: decision === 'accept' ? 'acceptInvitation' : 'declineInvitation',
    summary: decision === 'accept' ? 'Accept an invitation: become a member of its workspace' : 'Decline an invitation',
    tags: ['Workspaces'],
    family: 'bare',
    access: { kind: 'session', roles: 'read' },
    params: z.object({ id: pathId }),
    responses: {
      200: { description: 'The decided invitation', schema: z.strictObject({ invitation: invitationSchema }) },
      ...sessionErrors,
      404: { description: "No such invitation for this user (another user's invitation included)", schema: bareErrorSchema },
      409: { description: 'Already accepted, declined or expired', schema: bareErrorSchema },
    },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: { invitation: await decideInvitation(ctx.state.em, principal as SessionPrincipal, params.id, decision) },
    }),
  });

export const invitationRoutes: AnyRoute[] = [listInvitationsRoute, decisionRoute('accept'), decisionRoute('decline')];
