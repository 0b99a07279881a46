/**
 * A loopback stand-in for the services the corpus workflows call over HTTP: echoes requests
 * (method, query, headers, body), checks an API-key header, a query key, basic and bearer auth, reads form
 * bodies, answers text, empty answers and redirects, and answers 404.
 */
import http from 'node:http';
import { listenOnLoopback } from '../support/fakeServer';

export const CONTACTS_KEY = 'secret-contacts-key';
export const QUERY_KEY = 'secret-query-key';
export const BEARER_TOKEN = 'secret-bearer-token';
export const CUSTOM_KEY = 'secret-custom-key';

export async function startExtflowService(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/echo')
        return send(200, { method: req.method, query: Object.fromEntries(url.searchParams), headers: req.headers });
      if (url.pathname === '/contacts' && req.method === 'POST') {
        const auth = req.headers['x-api-key'];
        if (auth !== CONTACTS_KEY) return send(401, { error: 'missing key' });
        return send(201, { created: true, auth, received: JSON.parse(raw) });
      }
      if (url.pathname === '/form' && req.method === 'POST') return send(200, { contentType: req.headers['content-type'], raw });
      // For the HTTP Request node of every version (test/integration/extflow/httpRequest.test.ts).
      if (url.pathname === '/inspect')
        return send(200, { method: req.method, query: Object.fromEntries(url.searchParams), headers: req.headers, raw });
      // A list of `n` objects naming `name`: an HTTP Request run per item (one request each).
      if (url.pathname === '/repeat') {
        const n = Math.min(10, Number(url.searchParams.get('n') ?? 1));
        return send(
          200,
          Array.from({ length: n }, (_, i) => ({ i, name: url.searchParams.get('name') })),
        );
      }
      if (url.pathname === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end('hello text');
      }
      if (url.pathname === '/json-as-text') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('{"n":1}');
      }
      if (url.pathname === '/empty') {
        res.writeHead(204);
        return res.end();
      }
      if (url.pathname === '/missing') return send(404, { error: 'nope' });
      if (url.pathname === '/redirect') {
        res.writeHead(302, { location: '/echo?redirected=yes' });
        return res.end();
      }
      if (url.pathname === '/query-key')
        return url.searchParams.get('api_key') === QUERY_KEY
          ? send(200, { ok: true, others: url.searchParams.get('q') })
          : send(401, { ok: false });
      if (url.pathname === '/basic')
        return req.headers.authorization === `Basic ${Buffer.from('ada:pw').toString('base64')}`
          ? send(200, { ok: true })
          : send(401, { ok: false });
      // The external tool's custom auth: a header and a query parameter together.
      if (url.pathname === '/custom')
        return req.headers['x-custom-key'] === CUSTOM_KEY && url.searchParams.get('tenant') === 'acme'
          ? send(200, { ok: true, q: url.searchParams.get('q') })
          : send(401, { ok: false });
      if (url.pathname === '/bearer')
        return req.headers.authorization === `Bearer ${BEARER_TOKEN}` ? send(200, { ok: true }) : send(401, { ok: false });
      return send(404, { error: 'not found' });
    });
  });
  return listenOnLoopback(server);
}

/** Starts the service before the test file's tests and closes it after them; read `url` inside tests. */
export function useExtflowService(): { readonly url: string } {
  let service: { url: string; close(): Promise<void> } | undefined;
  beforeAll(async () => {
    service = await startExtflowService();
  });
  afterAll(async () => {
    await service?.close();
  });
  return {
    get url() {
      if (!service) throw new Error('the extflow service is not started (use it inside tests)');
      return service.url;
    },
  };
}
