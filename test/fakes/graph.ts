/**
 * A loopback Microsoft Graph (v1.0) mailbox for the mailer: the inbox messages delta query
 * (`/me/mailFolders/inbox/messages/delta`, two messages per page with `@odata.nextLink`, then
 * `@odata.deltaLink` carrying a `$deltatoken`; 410 for a token older than `expireDelta`),
 * `GET /me/messages/{id}/$value` (raw MIME) and `POST /me/sendMail` (202) in both of Graph's
 * forms: JSON `{ message, saveToSentItems }`, or the MIME form (`Content-Type: text/plain`, the
 * base64-encoded MIME message as the body; 400 `ErrorMimeContentInvalidBase64String` when it is
 * not base64 MIME). `/users/{id}/…` works like `/me/…`. Base URL: `${url}/v1.0`.
 */
import { bearer, startProviderFake, type FakeRequest, type ProviderFake, type TokenEndpointOptions } from './providerServer';

export interface GraphFake extends ProviderFake {
  baseUrl: string;
  deliver(raw: string | Buffer, opts?: { conversationId?: string }): string;
  expireDelta(): void;
  /** sendMail calls: the JSON body, or the decoded MIME of the MIME form. */
  sent: Array<{ user: string; body?: { message: Record<string, unknown>; saveToSentItems?: boolean }; mime?: string }>;
}

/** With `oauth`, the identity platform's refresh-token grant is served at `tokenUrl` (see providerServer). */
export async function startGraphFake(token: string, opts: Pick<TokenEndpointOptions, 'oauth'> = {}): Promise<GraphFake> {
  const messages: Array<{ id: string; conversationId: string; raw: Buffer }> = [];
  const sent: GraphFake['sent'] = [];
  let minToken = 0;
  let base = '';
  const notFound = {
    status: 404,
    json: { error: { code: 'ErrorItemNotFound', message: 'The specified object was not found in the store.' } },
  };
  const handle = (req: FakeRequest) => {
    const m = /^\/v1\.0\/(me|users\/[^/]+)\/(mailFolders\/inbox\/messages\/delta|messages\/([^/]+)\/\$value|sendMail)$/.exec(req.path);
    if (!m) return notFound;
    const user = m[1];
    if (m[2].startsWith('mailFolders') && req.method === 'GET') {
      const deltaToken = req.query.get('$deltatoken');
      const from = deltaToken === null ? 0 : Number(deltaToken);
      if (deltaToken !== null && from < minToken)
        return { status: 410, json: { error: { code: 'SyncStateNotFound', message: 'The sync state generation is invalid.' } } };
      const skip = Number(req.query.get('$skiptoken') ?? from);
      const page = messages.slice(skip, skip + 2);
      const link = `${base}/v1.0/${user}/mailFolders/inbox/messages/delta`;
      const tail =
        skip + 2 < messages.length
          ? { '@odata.nextLink': `${link}?$skiptoken=${skip + 2}` }
          : { '@odata.deltaLink': `${link}?$deltatoken=${messages.length}` };
      return {
        json: {
          '@odata.context': `${base}/v1.0/$metadata#Collection(message)`,
          value: page.map((x) => ({ id: x.id, conversationId: x.conversationId })),
          ...tail,
        },
      };
    }
    if (m[3] && req.method === 'GET') {
      const found = messages.find((x) => x.id === decodeURIComponent(m[3]));
      return found ? { bytes: found.raw, headers: { 'content-type': 'text/plain' } } : notFound;
    }
    if (m[2] === 'sendMail' && req.method === 'POST') {
      if (/^text\/plain\b/i.test(req.headers['content-type'] ?? '')) {
        const text = req.body.toString('ascii').replace(/\s+/g, '');
        const mime = Buffer.from(text, 'base64').toString('utf8');
        if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || !/^[\w-]+: /m.test(mime) || !/\r?\n\r?\n/.test(mime)) {
          return {
            status: 400,
            json: { error: { code: 'ErrorMimeContentInvalidBase64String', message: 'Invalid base64 string for MIME content.' } },
          };
        }
        sent.push({ user, mime });
      } else sent.push({ user, body: JSON.parse(req.body.toString('utf8')) });
      return { status: 202 };
    }
    return notFound;
  };
  const fake = await startProviderFake({
    authorized: bearer(token),
    unauthorized: { status: 401, json: { error: { code: 'InvalidAuthenticationToken', message: 'Access token is empty.' } } },
    handle,
    oauth: opts.oauth,
  });
  base = fake.url;
  return {
    ...fake,
    baseUrl: `${fake.url}/v1.0`,
    sent,
    deliver(raw, opts = {}) {
      const id = `AAMk${messages.length + 1}`;
      messages.push({ id, conversationId: opts.conversationId ?? `conv-${id}`, raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw) });
      return id;
    },
    expireDelta() {
      minToken = messages.length + 1;
    },
  };
}
