/**
 * Loopback GitHub REST API: `GET /repos/{owner}/{repo}`, `GET /repos/{owner}/{repo}/git/trees/{ref}?recursive=1`
 * (`{ sha, url, tree: [{ path, mode, type, sha, size, url }], truncated }`) and
 * `GET /repos/{owner}/{repo}/git/blobs/{sha}` (`{ sha, size, encoding: 'base64', content }`);
 * errors `{ message, documentation_url }` with 401 / 404.
 */
import { createHash } from 'node:crypto';
import { bearer, startProviderFake, type ProviderFake } from './providerServer';

export interface RepoFake extends ProviderFake {
  /** repository "owner/name" → path → content. */
  repos: Map<string, Map<string, string | Buffer>>;
  /** Repositories whose tree is answered truncated. */
  truncated: Set<string>;
  setFiles(repository: string, files: Record<string, string | Buffer>): void;
}

const gitSha = (content: Buffer) => createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
const notFound = { status: 404, json: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };

export async function startRepoFake(token = 'ghp_fake_token'): Promise<RepoFake> {
  const repos = new Map<string, Map<string, string | Buffer>>();
  const truncated = new Set<string>();
  const blobs = new Map<string, Buffer>();
  const fake = await startProviderFake({
    authorized: bearer(token),
    unauthorized: { status: 401, json: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } },
    handle: (req) => {
      const m = /^\/repos\/([^/]+\/[^/]+)(\/git\/(trees|blobs)\/(.+))?$/.exec(req.path);
      if (!m) return notFound;
      const files = repos.get(m[1]);
      if (!files) return notFound;
      if (!m[2]) return { json: { id: 1, full_name: m[1], default_branch: 'main', private: true } };
      if (m[3] === 'blobs') {
        const blob = blobs.get(m[4]);
        return blob
          ? { json: { sha: m[4], size: blob.length, encoding: 'base64', content: blob.toString('base64').replace(/(.{60})/g, '$1\n') } }
          : notFound;
      }
      if (decodeURIComponent(m[4]) !== 'main') return notFound;
      const entries = [...files.entries()].map(([path, content]) => {
        const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
        const sha = gitSha(bytes);
        blobs.set(sha, bytes);
        return { path, mode: '100644', type: 'blob', sha, size: bytes.length, url: `${req.path}/blobs/${sha}` };
      });
      const dirs = [
        ...new Set(
          [...files.keys()].flatMap((p) =>
            p
              .split('/')
              .slice(0, -1)
              .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
          ),
        ),
      ].map((path) => ({
        path,
        mode: '040000',
        type: 'tree',
        sha: createHash('sha1').update(path).digest('hex'),
      }));
      const tree = [...dirs, ...entries].sort((a, b) => (a.path < b.path ? -1 : 1));
      const treeSha = createHash('sha1')
        .update(JSON.stringify(entries.map((e) => [e.path, e.sha])))
        .digest('hex');
      return { json: { sha: treeSha, url: req.path, tree: truncated.has(m[1]) ? tree.slice(0, 2) : tree, truncated: truncated.has(m[1]) } };
    },
  });
  return {
    ...fake,
    repos,
    truncated,
    setFiles(repository, files) {
      repos.set(repository, new Map(Object.entries(files)));
    },
  };
}
