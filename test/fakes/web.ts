/**
 * A loopback web site for research tests: pages by path (HTML or any content type), a
 * robots.txt (none: 404), a count of requests by path, and holds that keep a path's requests in
 * flight until released.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestGate } from './providerServer';

export interface FakePage {
  body: string;
  contentType?: string;
  status?: number;
}

export interface FakeSite {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Request paths in arrival order (`/robots.txt` included). */
  requests: string[];
  count(path: string): number;
  page(path: string, page: FakePage | string): void;
  robots(text: string | null): void;
  /** Holds the requests of `path` until released; `held` resolves when one arrives. */
  hold(path: string): { held: Promise<void>; release(): void };
  close(): Promise<void>;
}

/** An HTML page with a title, a paragraph long enough for Readability, and links. */
export function htmlPage(title: string, text: string, links: string[] = []): string {
  const anchors = links.map((href) => `<li><a href="${href}">${href}</a></li>`).join('');
  const paragraph = `${text} `.repeat(8).trim();
  return `<!doctype html><html><head><title>${title}</title></head><body><nav>Menu</nav><article><h1>${title}</h1><p>${paragraph}</p><ul>${anchors}</ul></article><footer>footer text</footer></body></html>`;
}

export async function startFakeSite(): Promise<FakeSite> {
  const pages = new Map<string, FakePage>();
  const gates = new Map<string, ReturnType<typeof requestGate>>();
  const requests: string[] = [];
  let robotsTxt: string | null = null;

  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    await gates.get(path)?.pass();
    if (path === '/robots.txt') {
      if (robotsTxt === null) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(robotsTxt);
    }
    const page = pages.get(path);
    if (!page) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
    res.writeHead(page.status ?? 200, { 'content-type': page.contentType ?? 'text/html; charset=utf-8' }).end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    count: (path) => requests.filter((p) => p === path).length,
    page: (path, page) => void pages.set(path, typeof page === 'string' ? { body: page } : page),
    robots: (text) => void (robotsTxt = text),
    hold: (path) => {
      const gate = gates.get(path) ?? requestGate();
      gates.set(path, gate);
      return gate.hold();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
