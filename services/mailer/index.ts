/**
 * The mailer area: inbound routes (routes.ts), stored messages, threading and lists
 * (messages.ts), the signed and generic inbound endpoints (inbound.ts), replies with
 * reservations (replies.ts), polling groups and their polls (pollingGroups.ts, polling.ts),
 * the providers (providers.ts) and Google domain-wide delegation (delegation.ts). Accepted inbound messages go through the webhook outbox.
 */
export {
  createRoute,
  type CreateRouteInput,
  listRoutes,
  loadRoute,
  type MailerRouteRow,
  type MailerRouteView,
  normalizeAddress,
  patchRoute,
  type PatchRouteInput,
  ROUTE_NOT_FOUND,
  routeLinks,
  routeView,
  signingSecretOf,
  sql,
} from './routes';
export {
  type AcceptedMail,
  acceptInboundMail,
  getThread,
  type InboundMail,
  insertMessage,
  listMessages,
  listThreads,
  loadMessage,
  MESSAGE_NOT_FOUND,
  type MessageRow,
  type MessageView,
  messageView,
  normalizeSubject,
  participantsKey,
  requireBodyField,
  sanitizeMailHtml,
  THREAD_MESSAGE_LIMIT,
  THREAD_NOT_FOUND,
  type ThreadView,
  withRawMime,
} from './messages';
export {
  type GenericInbound,
  MAIL_INBOUND_MAX_BYTES,
  readLimitedBody,
  receiveGenericMail,
  receiveSignedMail,
  SIGNATURE_WINDOW_SECONDS,
  verifyMailSignature,
} from './inbound';
export {
  authorizeRetry,
  getReservation,
  type ReplyDeps,
  type ReplyInput,
  type ReplyOutcome,
  RESERVATION_NOT_FOUND,
  type ReservationStatus,
  type ReservationView,
  sendReply,
} from './replies';
export {
  getPollingGroup,
  listPollingGroups,
  patchPollingGroup,
  POLLING_GROUP_NOT_FOUND,
  POLLING_INTERVAL,
  type PollingGroupInput,
  pollingGroupView,
  type PollingGroupView,
  upsertPollingGroup,
} from './pollingGroups';
export { type MailPollDeps, type MailPollResult, pollMailGroup } from './polling';
export { getGoogleDwd, type GoogleDwdInput, type GoogleDwdView, googleDwdView, setGoogleDwd } from './delegation';
export { type AttachmentStore, type InboundAttachment, mailerPrincipal, MAX_STORED_ATTACHMENTS, storeAttachments } from './attachments';
export { type MailProviderDeps } from './providers';
