import type { EntityManager } from '@mikro-orm/postgresql';
import type { Readable } from 'node:stream';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { conflict, invalidInput, notFound, tooLarge, unauthenticated } from '../kernel/errors';
import type { WorkspacePrincipal } from '../kernel/principal';
import { acceptInboundMail, withRawMime, type AcceptedMail, type InboundMail } from './messages';
import { mailerPrincipal, storeAttachments, type AttachmentStore, type InboundAttachment } from './attachments';
import { normalizeAddress, signingSecretOf, sql, type MailerRouteRow, ROUTE_NOT_FOUND } from './routes';

/** The largest signed inbound body (spec limits: mail inbound body 1 MiB). */
export const MAIL_INBOUND_MAX_BYTES = 1024 * 1024;
/** Signed deliveries whose timestamp is further than this from now are refused. */
export const SIGNATURE_WINDOW_SECONDS = 5 * 60;

const BODY_TOO_LARGE = 'Mail inbound body exceeds 1 MiB.';

/**
 * Reads a request body of at most `max` bytes: a declared Content-Length over the limit is
 * refused before a byte is read, and a streamed body is cut off as soon as it passes it.
 */
export async function readLimitedBody(stream: Readable, contentLength: string | undefined, max = MAIL_INBOUND_MAX_BYTES): Promise<Buffer> {
  if (contentLength !== undefined && Number(contentLength) > max) {
    stream.resume();
    throw tooLarge(BODY_TOO_LARGE);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > max) {
      stream.resume();
      throw tooLarge(BODY_TOO_LARGE);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/**
 * Checks `x-svc-signature: v1=<hex HMAC-SHA256 of timestamp + '.' + raw body>` in constant
 * time, with `x-svc-timestamp` (unix seconds) within five minutes of now. 401 otherwise.
 */
export function verifyMailSignature(
  secret: string,
  raw: Buffer,
  headers: Record<string, string | string[] | undefined>,
  nowMs = Date.now(),
): void {
  const timestamp = headers['x-svc-timestamp'];
  const signature = headers['x-svc-signature'];
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) throw unauthenticated('Missing or invalid x-svc-timestamp.');
  if (typeof signature !== 'string') throw unauthenticated('Missing x-svc-signature.');
  const candidates = signature
    .split(',')
    .map((s) => s.trim())
    .filter((s) => /^v1=[0-9a-f]{64}$/i.test(s))
    .map((s) => Buffer.from(s.slice(3), 'hex'));
  if (candidates.length === 0) throw unauthenticated('Invalid x-svc-signature.');
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(raw).digest();
  const matched = candidates.reduce((ok, c) => timingSafeEqual(expected, c) || ok, false);
  if (!matched) throw unauthenticated('Invalid x-svc-signature.');
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) throw unauthenticated('Stale x-svc-timestamp.');
}

const text = (max: number) => z.string().max(max);
const signedBody = z.object({
  externalMessageId: text(500).min(1),
  from: text(500).min(1),
  subject: text(2000),
  text: text(MAIL_INBOUND_MAX_BYTES).optional(),
  html: text(MAIL_INBOUND_MAX_BYTES).optional(),
  externalThreadId: text(500).min(1).optional(),
  to: z.union([text(320), z.array(text(320)).max(100)]).optional(),
  raw: text(MAIL_INBOUND_MAX_BYTES).optional(),
  providerMetadata: z.record(z.string(), z.unknown()).optional(),
});

/** The signed inbound endpoint: verify, then store durably before the 202. */
export async function receiveSignedMail(
  em: EntityManager,
  secretKey: string | undefined,
  routeId: string,
  raw: Buffer,
  headers: Record<string, string | string[] | undefined>,
  /** Where attachments of a `raw` MIME body are stored as Files. */
  files: AttachmentStore,
): Promise<{ route: MailerRouteRow; accepted: AcceptedMail }> {
  const [route] = await sql<MailerRouteRow>(em, `select * from mailer_routes where id = ?`, [routeId]);
  if (!route || !route.enabled) throw notFound(ROUTE_NOT_FOUND);
  const secret = signingSecretOf(route, secretKey);
  if (!secret) throw conflict('Signing is not configured for this route.', { code: 'mailer_signing_unconfigured' });
  verifyMailSignature(secret, raw, headers);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidInput('Body must be JSON.');
  }
  const parsed = signedBody.safeParse(json);
  if (!parsed.success)
    throw invalidInput(`Invalid request body: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'} ${i.message}`).join('; ')}`);
  const body = parsed.data;
  const to = body.to === undefined ? [] : Array.isArray(body.to) ? body.to : [body.to];
  if (to.length > 0 && !to.some((a) => a.trim().toLowerCase() === route.address)) throw invalidInput('to must equal the route address.');
  let mail: InboundMail = {
    from: body.from,
    to: to.length > 0 ? to.map((a) => a.trim().toLowerCase()) : [route.address],
    subject: body.subject,
    text: body.text ?? null,
    html: body.html ?? null,
    externalMessageId: body.externalMessageId,
    externalThreadId: body.externalThreadId ?? null,
    messageIdHeader: null,
    inReplyTo: null,
    references: [],
    providerMetadata: body.providerMetadata ?? {},
  };
  let attachments: InboundAttachment[] = [];
  if (body.raw) ({ mail, attachments } = await withRawMime(mail, body.raw));
  const storeFiles =
    attachments.length > 0
      ? () => storeAttachments(em, files, mailerPrincipal(route.workspace_id, `route:${route.id}`), attachments)
      : undefined;
  const accepted = await acceptInboundMail(em, route, mail, 'conflict', storeFiles);
  return { route, accepted };
}

export interface GenericInbound {
  to: string;
  from: string;
  subject: string;
  text?: string;
  /** Optional dedupe id (the Idempotency-Key header): a repeat returns the first message, `deduplicated`. */
  deliveryId?: string;
}

/** The address-only endpoint: the enabled Production route of `to` in the caller's workspace. */
export async function receiveGenericMail(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: GenericInbound,
): Promise<{ route: MailerRouteRow; accepted: AcceptedMail }> {
  const address = normalizeAddress(input.to);
  const [route] = await sql<MailerRouteRow>(
    em,
    `select * from mailer_routes where workspace_id = ? and address = ? and enabled and not target_bound order by created_at asc limit 1`,
    [principal.workspaceId, address],
  );
  if (!route) throw notFound(ROUTE_NOT_FOUND);
  const mail: InboundMail = {
    from: input.from,
    to: [address],
    subject: input.subject,
    text: input.text ?? null,
    html: null,
    externalMessageId: input.deliveryId ? `generic:${input.deliveryId}` : null,
    externalThreadId: null,
    messageIdHeader: null,
    inReplyTo: null,
    references: [],
    providerMetadata: { source: 'generic' },
  };
  return { route, accepted: await acceptInboundMail(em, route, mail, 'deduplicate') };
}
