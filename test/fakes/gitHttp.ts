import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { listenOnLoopback } from '../support/fakeServer';

/**
 * A loopback smart-HTTP Git server: the real `git http-backend` (CGI) behind a small node HTTP
 * server, serving the bare repositories under `root` at `/<name>.git/...`. Every request needs
 * `Authorization`: HTTP Basic with one of `basic` (user → password), or a bearer token of
 * `bearer` (token → user); anything else is 401 with a Basic challenge. The authenticated user
 * is REMOTE_USER, which is what lets http-backend accept pushes (receive-pack).
 */
export interface GitHttpServer {
  url: string;
  /** Requests seen: method, path and whether they were authorized. */
  requests: Array<{ method: string; path: string; user: string | null }>;
  close(): Promise<void>;
}

export async function startGitHttpServer(opts: {
  root: string;
  basic?: Record<string, string>;
  bearer?: Record<string, string>;
}): Promise<GitHttpServer> {
  const backend = path.join(execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim(), 'git-http-backend');
  const requests: GitHttpServer['requests'] = [];

  const userOf = (header: string | undefined): string | null => {
    if (!header) return null;
    const [kind, value] = header.split(' ', 2);
    if (kind?.toLowerCase() === 'basic' && value) {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      const user = decoded.slice(0, i);
      return i > 0 && opts.basic?.[user] !== undefined && opts.basic[user] === decoded.slice(i + 1) ? user : null;
    }
    if (kind?.toLowerCase() === 'bearer' && value) return opts.bearer?.[value] ?? null;
    return null;
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://git.local');
    const user = userOf(req.headers.authorization);
    requests.push({ method: req.method ?? 'GET', path: url.pathname, user });
    if (!user) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' });
      res.end('Authentication required\n');
      return;
    }
    const child = spawn(backend, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: opts.root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        REQUEST_METHOD: req.method ?? 'GET',
        QUERY_STRING: url.search.replace(/^\?/, ''),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    req.pipe(child.stdin);
    child.stdin.on('error', () => undefined);
    // CGI output: headers (Status: included), a blank line, then the body, streamed.
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const text = head.toString('latin1');
      const end = text.search(/\r?\n\r?\n/);
      if (end < 0) return;
      const sep = /\r?\n\r?\n/.exec(text)![0].length;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, end).split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      headersDone = true;
      res.write(head.subarray(end + sep));
    });
    child.stderr.resume();
    child.on('close', () => {
      if (!headersDone) res.writeHead(500).end('git http-backend failed\n');
      else res.end();
    });
  });
  return { ...(await listenOnLoopback(server)), requests };
}
