import { z } from 'zod';
import { isoDate, roleSchema } from './index';

export const invitationSchema = z.strictObject({
  id: z.string(),
  workspaceId: z.string(),
  email: z.string(),
  role: roleSchema,
  status: z.enum(['pending', 'accepted', 'declined', 'expired']),
  createdAt: isoDate,
  expiresAt: isoDate,
});

export const receivedInvitationSchema = invitationSchema.extend({ workspace: z.strictObject({ id: z.string(), name: z.string() }) });
