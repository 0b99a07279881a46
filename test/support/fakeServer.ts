import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  body: string;
}

/**
 * A real HTTP server on 127.0.0.1 standing in for an outside service. `handler` decides the
 * answer per request; every request is recorded so tests can count calls.
 */
export async function startFakeServer(
  handler: (req: RecordedRequest, count: number) => { status?: number; body?: unknown; delayMs?: number } = () => ({}),
): Promise<{ url: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const recorded = { method: req.method ?? 'GET', path: req.url ?? '/', body };
      requests.push(recorded);
      const answer = handler(recorded, requests.length);
      setTimeout(() => {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body ?? { ok: true, count: requests.length }));
      }, answer.delayMs ?? 0);
    });
  });
  return { ...(await listenOnLoopback(server)), requests };
}

/** Starts `server` on 127.0.0.1 (a free port): its base URL, and a close that drops open connections. */
export async function listenOnLoopback(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
