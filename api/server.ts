import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface RunningServer {
  server: http.Server;
  url: string;
  /**
   * Stops accepting connections and waits for in-flight requests to finish; connections
   * still open after `timeoutMs` are cut. Responses sent meanwhile carry `Connection: close`
   * so keep-alive clients reconnect elsewhere.
   */
  close(timeoutMs: number): Promise<void>;
}

/** Starts the HTTP server; resolves once it is listening. */
export async function listen(
  app: Koa<any, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  opts: { port: number; host: string; lifecycle: { shuttingDown: boolean } },
): Promise<RunningServer> {
  const handle = app.callback();
  // Koa's handler settles each request itself (errors go to ctx.onerror): nothing to await here.
  const server = http.createServer((req, res) => void handle(req, res));
  // Idle keep-alive connections outlive the clients' own idle timeouts (undici: 4 s; load
  // balancers: 60 s), so the server never closes a socket a client is just reusing: that race
  // surfaced as ECONNRESET on large uploads on a busy machine with Node's 5 s default.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A burst of webhook callers queues in the kernel rather than being refused (Node's default is 511).
    server.listen({ port: opts.port, host: opts.host, backlog: 4096 }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = opts.host === '0.0.0.0' || opts.host === '::' ? 'localhost' : opts.host;
  return {
    server,
    url: `http://${shownHost}:${port}`,
    close: async (timeoutMs: number) => {
      opts.lifecycle.shuttingDown = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
