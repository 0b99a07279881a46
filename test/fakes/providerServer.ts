/**
 * The common part of the loopback provider fakes: a real HTTP server on 127.0.0.1 that checks
 * the bearer (or Basic) credential, records requests, can hold or fail them, and routes to the
 * provider's handler.
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
}

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

export async function startProviderFake(opts: {
  authorized: (headers: http.IncomingHttpHeaders) => boolean;
  unauthorized: FakeAnswer;
  handle: (req: FakeRequest) => FakeAnswer;
}): Promise<ProviderFake> {
  const requests: FakeRequest[] = [];
  let failures: { left: number; answer: FakeAnswer } = { left: 0, answer: {} };
  const gate = requestGate();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const request: FakeRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(request);
      await gate.pass();
      let answer: FakeAnswer;
      if (!opts.authorized(req.headers)) answer = opts.unauthorized;
      else if (failures.left > 0) {
        failures.left--;
        answer = failures.answer;
      } else {
        try {
          answer = opts.handle(request);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const bearer = (token: string) => (headers: http.IncomingHttpHeaders) => headers.authorization === `Bearer ${token}`;
