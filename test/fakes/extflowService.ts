/**
 * A loopback stand-in for the services the corpus workflows call over HTTP: echoes requests
 * (method, query, headers), checks an API-key header, reads form bodies, and answers 404.
 */
import http from 'node:http';
import { listenOnLoopback } from '../support/fakeServer';

export const CONTACTS_KEY = 'secret-contacts-key';

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
      return send(404, { error: 'not found' });
    });
  });
  return listenOnLoopback(server);
}
