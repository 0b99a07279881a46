import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP API on 127.0.0.1 that checks credentials the way outside services do:
 *
 * - `/probe…` (any method): 200 `{ authenticated: true }` when the request carries an accepted
 *   header value, else 401 with `WWW-Authenticate`.
 * - `/echo`: the request's headers, when authenticated (a service that reflects the secret).
 * - `POST /oauth/token`: the OAuth2 refresh-token grant (RFC 6749 §6, form-encoded); a valid
 *   refresh token (and client id and secret) gets a new access token, which is accepted from
 *   then on; anything else is 400 `{ error: invalid_grant }`.
 * - Provider identity endpoints under `/<provider>/` (mailA `users/me/profile`, mailB `me`,
 *   drive `about`, wiki `rest/api/user/current`, chat `POST auth.test` answering 200 with
 *   `ok: false` for a bad token, repo `user`, ci `me/api/json`, errtracker the base itself).
 * - `/llm/models`: an OpenAI-compatible model list.
 * - `/redirect?to=URL`: 302 to another address. `/hang`: never answers.
 *
 * Every request is recorded with its headers.
 */
export interface FakeApiRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface FakeApi {
  url: string;
  requests: FakeApiRequest[];
  /** Accepts `value` in header `name` (case-insensitive name). */
  accept(name: string, value: string): void;
  /** Stops accepting a value (an expired token). */
  revoke(name: string, value: string): void;
  oauth: { refreshToken: string; clientId: string; clientSecret: string; refreshes: number; issued: string[] };
  close(): Promise<void>;
}

const PROVIDER_PATHS: Record<string, { method: string; path: string }> = {
  mailA: { method: 'GET', path: '/mailA/users/me/profile' },
  mailB: { method: 'GET', path: '/mailB/me' },
  drive: { method: 'GET', path: '/drive/about' },
  wiki: { method: 'GET', path: '/wiki/rest/api/user/current' },
  chat: { method: 'POST', path: '/chat/auth.test' },
  repo: { method: 'GET', path: '/repo/user' },
  ci: { method: 'GET', path: '/ci/me/api/json' },
  errtracker: { method: 'GET', path: '/errtracker/' },
};

export async function startFakeApi(oauth: { refreshToken: string; clientId: string; clientSecret: string }): Promise<FakeApi> {
  const accepted = new Set<string>();
  const requests: FakeApiRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const state = { ...oauth, refreshes: 0, issued: [] as string[] };
  const key = (name: string, value: string) => `${name.toLowerCase()}\n${value}`;
  const authenticated = (req: http.IncomingMessage) =>
    Object.entries(req.headers).some(([name, value]) =>
      (Array.isArray(value) ? value : [value]).some((v) => v !== undefined && accepted.has(key(name, v))),
    );

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, headers: req.headers, body });
      const json = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      const path = url.pathname;
      if (path === '/hang') return void hanging.add(res);
      if (path === '/redirect') {
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
        return void res.end();
      }
      if (path === '/oauth/token' && req.method === 'POST') {
        const form = new URLSearchParams(body);
        const valid =
          form.get('grant_type') === 'refresh_token' &&
          form.get('refresh_token') === state.refreshToken &&
          form.get('client_id') === state.clientId &&
          form.get('client_secret') === state.clientSecret;
        if (!valid) return json(400, { error: 'invalid_grant', error_description: 'The refresh token is invalid.' });
        state.refreshes++;
        const accessToken = `fresh-access-${state.refreshes}-${Math.random().toString(36).slice(2, 12)}`;
        state.issued.push(accessToken);
        accepted.add(key('authorization', `Bearer ${accessToken}`));
        return json(200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
      }
      if (path.startsWith('/probe')) {
        return authenticated(req)
          ? json(200, { authenticated: true })
          : json(401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer realm="fake"' });
      }
      if (path === '/echo') return authenticated(req) ? json(200, { headers: req.headers }) : json(401, { error: 'unauthorized' });
      if (path === '/llm/models')
        return authenticated(req)
          ? json(200, { object: 'list', data: [{ id: 'model-a' }, { id: 'model-b' }] })
          : json(401, { error: { message: 'Incorrect API key provided' } });
      const provider = Object.entries(PROVIDER_PATHS).find(([, p]) => p.path === path && p.method === req.method);
      if (provider) {
        if (provider[0] === 'chat')
          return json(200, authenticated(req) ? { ok: true, user: 'bot', team: 'fake' } : { ok: false, error: 'invalid_auth' });
        return authenticated(req)
          ? json(200, { id: 'user-1', login: 'fake-user', emailAddress: 'user@example.test' })
          : json(401, { message: 'Bad credentials' });
      }
      json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    accept: (name, value) => void accepted.add(key(name, value)),
    revoke: (name, value) => void accepted.delete(key(name, value)),
    oauth: state,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
