import { z } from 'zod';
import { routeGroup, type AnyRoute, SESSION_READ } from '../http/route';
import { idParams } from '../schemas';
import { invitationSchema, receivedInvitationSchema } from '../schemas/invitations';
import { decideInvitation, listReceivedInvitations } from '../../services/accounts/invitations';
import type { SessionPrincipal } from '../../services/kernel/principal';

/** The invitee's side of workspace invitations: their own session only, never an API key. */
const invitationRoute = routeGroup({
  tags: ['Workspaces'],
  family: 'bare',
  access: SESSION_READ,
  errors: { 401: 'Sign-in is required', 403: 'Cross-origin request refused' },
  pathPrefix: '/api/invitations',
});

export const listInvitationsRoute = invitationRoute({
  method: 'get',
  path: '',
  operationId: 'listReceivedInvitations',
  summary: "The signed-in user's pending invitations to other workspaces",
  responses: {
    200: { description: 'Pending invitations, newest first', schema: z.strictObject({ invitations: z.array(receivedInvitationSchema) }) },
  },
  handler: async (ctx, { principal }) => ({
    status: 200,
    body: { invitations: await listReceivedInvitations(ctx.state.em, principal as SessionPrincipal) },
  }),
});

const decisionRoute = (decision: 'accept' | 'decline') =>
  invitationRoute({
    method: 'post',
    path: `/{id}/${decision}`,
    operationId: decision === 'accept' ? 'acceptInvitation' : 'declineInvitation',
    summary: decision === 'accept' ? 'Accept an invitation: become a member of its workspace' : 'Decline an invitation',
    params: idParams,
    responses: {
      200: { description: 'The decided invitation', schema: z.strictObject({ invitation: invitationSchema }) },
      404: "No such invitation for this user (another user's invitation included)",
      409: 'Already accepted, declined or expired',
    },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: { invitation: await decideInvitation(ctx.state.em, principal as SessionPrincipal, params.id, decision) },
    }),
  });

export const invitationRoutes: AnyRoute[] = [listInvitationsRoute, decisionRoute('accept'), decisionRoute('decline')];
