/**
 * The common part of the loopback provider fakes: a real HTTP server on 127.0.0.1 that checks
 * the bearer (or Basic) credential, records requests, can hold or fail them, and routes to the
 * provider's handler. With `oauth` or `jwtGrant` it also serves an OAuth 2.0 token endpoint at
 * `POST /token` (form-encoded): the refresh-token grant (RFC 6749 §6) and the JWT bearer grant
 * (RFC 7523, checked by `jwtGrant`); the access tokens it issues are accepted from then on.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** The request body as received. */
  body: Buffer;
}

export interface FakeAnswer {
  status?: number;
  json?: unknown;
  bytes?: Buffer;
  headers?: Record<string, string>;
}

export interface ProviderFake {
  url: string;
  /** Requests received (path and query), in order. */
  requests: FakeRequest[];
  /** Answers the next `n` requests with this status and body (the provider's error shape). */
  failNext(n: number, answer: FakeAnswer): void;
  /** Holds every request until `release()`; `held` resolves when one arrives. */
  hold(): { held: Promise<void>; release(): void };
  close(): Promise<void>;
  /** The token endpoint (`POST /token`). */
  tokenUrl: string;
  /** Token requests answered, in order: the grant type, the subject of an issued token, or the error. */
  grants: Array<{ grantType: string; subject?: string; error?: string }>;
  /** Forgets every issued access token (they expired): the next call with one is a 401. */
  revokeIssued(): void;
}

/** What the token endpoint checks: a refresh grant's refresh token (and client), a JWT assertion. */
export interface TokenEndpointOptions {
  oauth?: { refreshToken: string; clientId?: string; clientSecret?: string };
  /** Checks an RFC 7523 assertion: the subject the token acts for, or the refusal to answer. */
  jwtGrant?: (assertion: string) => { subject: string } | { refusal: FakeAnswer };
}

/** The subject of the access token a request carries, when the token endpoint issued it. */
export type SubjectOf = (headers: http.IncomingHttpHeaders) => string | undefined;

/** Holds requests while a test wants them in flight: `pass()` waits while held; `hold()` starts holding. */
export function requestGate() {
  let gate: { promise: Promise<void>; arrived: () => void } | null = null;
  return {
    async pass(): Promise<void> {
      if (!gate) return;
      gate.arrived();
      await gate.promise;
    },
    hold(): { held: Promise<void>; release(): void } {
      let release!: () => void;
      let arrived!: () => void;
      const promise = new Promise<void>((r) => (release = r));
      const held = new Promise<void>((r) => (arrived = r));
      gate = { promise, arrived };
      return {
        held,
        release: () => {
          gate = null;
          release();
        },
      };
    },
  };
}

export async function startProviderFake(
  opts: {
    authorized: (headers: http.IncomingHttpHeaders) => boolean;
    unauthorized: FakeAnswer;
    handle: (req: FakeRequest, subjectOf: SubjectOf) => FakeAnswer;
  } & TokenEndpointOptions,
): Promise<ProviderFake> {
  const requests: FakeRequest[] = [];
  const issued = new Map<string, string>();
  const grants: ProviderFake['grants'] = [];
  let issuedCount = 0;
  const subjectOf: SubjectOf = (headers) => issued.get(/^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1] ?? '');
  const tokenAnswer = (request: FakeRequest): FakeAnswer => {
    const form = new URLSearchParams(request.body.toString('utf8'));
    const grantType = form.get('grant_type') ?? '';
    const refuse = (answer: FakeAnswer) => {
      grants.push({ grantType, error: String((answer.json as { error?: unknown })?.error) });
      return answer;
    };
    let subject: string;
    if (grantType === 'refresh_token' && opts.oauth) {
      const o = opts.oauth;
      const valid =
        form.get('refresh_token') === o.refreshToken &&
        (o.clientId === undefined || form.get('client_id') === o.clientId) &&
        (o.clientSecret === undefined || form.get('client_secret') === o.clientSecret);
      if (!valid) return refuse({ status: 400, json: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } });
      subject = 'me';
    } else if (grantType === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && opts.jwtGrant) {
      const checked = opts.jwtGrant(form.get('assertion') ?? '');
      if ('refusal' in checked) return refuse(checked.refusal);
      subject = checked.subject;
    } else return refuse({ status: 400, json: { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${grantType}` } });
    const accessToken = `issued-${++issuedCount}-${Math.random().toString(36).slice(2, 12)}`;
    issued.set(accessToken, subject);
    grants.push({ grantType, subject });
    return { json: { access_token: accessToken, token_type: 'Bearer', expires_in: 3599 } };
  };
  let failures: { left: number; answer: FakeAnswer } = { left: 0, answer: {} };
  const gate = requestGate();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(request);
      await gate.pass();
      let answer: FakeAnswer;
      if (request.path === '/token' && request.method === 'POST' && (opts.oauth || opts.jwtGrant)) answer = tokenAnswer(request);
      else if (!opts.authorized(req.headers) && subjectOf(req.headers) === undefined) answer = opts.unauthorized;
      else if (failures.left > 0) {
        failures.left--;
        answer = failures.answer;
      } else {
        try {
          answer = opts.handle(request, subjectOf);
        } catch (err) {
          answer = { status: 500, json: { error: (err as Error).message } };
        }
      }
      if (res.destroyed) return;
      if (answer.status === 202 || answer.status === 204) {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end();
      } else if (answer.bytes) {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/octet-stream', ...(answer.headers ?? {}) });
        res.end(answer.bytes);
      } else {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json; charset=utf-8', ...(answer.headers ?? {}) });
        res.end(JSON.stringify(answer.json ?? {}));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext: (n, answer) => (failures = { left: n, answer }),
    hold: () => gate.hold(),
    tokenUrl: `http://127.0.0.1:${port}/token`,
    grants,
    revokeIssued: () => issued.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const bearer = (token: string) => (headers: http.IncomingHttpHeaders) => headers.authorization === `Bearer ${token}`;
