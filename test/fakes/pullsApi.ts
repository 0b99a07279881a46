import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePull {
  number: number;
  title: string;
  head: string;
  base: string;
  state: 'open' | 'closed';
  merged: boolean;
  merge_commit_sha: string | null;
}

/**
 * A loopback stand-in for the GitHub REST pulls API (`POST /repos/{owner}/{repo}/pulls`,
 * `GET /repos/{owner}/{repo}/pulls/{number}`), requiring `Authorization: Bearer <token>`.
 * Tests merge or close pull requests through `pulls` (merging the Git branch themselves).
 */
export async function startPullsApi(token: string): Promise<{ url: string; pulls: FakePull[]; close(): Promise<void> }> {
  const pulls: FakePull[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${token}`) return send(401, { message: 'Bad credentials' });
      const m = /^\/repos\/([^/]+)\/([^/]+)\/pulls(?:\/(\d+))?$/.exec(req.url ?? '');
      if (!m) return send(404, { message: 'Not Found' });
      const present = (p: FakePull) => ({
        ...p,
        html_url: `https://git.example.test/${m[1]}/${m[2]}/pull/${p.number}`,
        head: { ref: p.head },
        base: { ref: p.base },
      });
      if (req.method === 'POST' && !m[3]) {
        const body = JSON.parse(raw) as { title: string; head: string; base: string };
        if (pulls.some((p) => p.head === body.head && p.state === 'open')) return send(422, { message: 'A pull request already exists' });
        const pull: FakePull = {
          number: pulls.length + 1,
          title: body.title,
          head: body.head,
          base: body.base,
          state: 'open',
          merged: false,
          merge_commit_sha: null,
        };
        pulls.push(pull);
        return send(201, present(pull));
      }
      if (req.method === 'GET' && m[3]) {
        const pull = pulls.find((p) => p.number === Number(m[3]));
        return pull ? send(200, present(pull)) : send(404, { message: 'Not Found' });
      }
      return send(405, { message: 'Method not allowed' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pulls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
