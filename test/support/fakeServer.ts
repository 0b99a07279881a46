import http from 'node:http';
import { listenOnLoopback } from '../../scripts/lib/loopback';

// Tests import it from here, beside the fake servers that use it.
export { listenOnLoopback };

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
