/**
 * `repo`: GitHub REST: `GET /repos/{owner}/{repo}` (default branch), `GET
 * /repos/{owner}/{repo}/git/trees/{branch}?recursive=1` (`{ sha, tree, truncated }`) and `GET
 * /repos/{owner}/{repo}/git/blobs/{sha}` (base64 content). One record per text file under
 * `pathPrefixes` (at most 50 unique; all files without them); binary files are skipped.
 *
 * A truncated tree fails the run (narrow `pathPrefixes`), as does a first file larger than
 * maxBytes. Pages count the repository and tree requests; blob downloads count as items and
 * bytes. Cursor per repository: the tree sha of the last complete pass (unchanged: nothing to do)
 * and, while a pass is unfinished, the last path taken. Files are fetched only when their blob
 * sha differs from the stored version; a complete pass tombstones stored files no longer in the
 * tree.
 */
import { documentKindOf, mimeTypeOfKind } from '../extraction';
import { storable, SyncError, stringList, providerFailure, type ConnectorProvider, type SyncItem } from './types';

interface RepoState {
  treeSha: string | null;
  after: string | null;
}

interface TreeEntry {
  path: string;
  type: string;
  sha: string;
  size?: number;
}

const BLOB_CONCURRENCY = 8;
const REPOSITORY = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

export const repoProvider: ConnectorProvider = {
  id: 'repo',
  label: 'Repository (GitHub REST)',
  scopes: ['contents:read'],
  filters: (config) => ({
    repositories: stringList(config, 'repositories', { required: true, max: 20, pattern: REPOSITORY, what: 'owner/name' }),
    pathPrefixes:
      stringList(config, 'pathPrefixes', { max: 50, pattern: /^[^/].*$/, what: 'paths relative to the repository root' }) ?? null,
  }),
  authHeaders: (credential) => ({
    authorization: `Bearer ${credential.token}`,
    accept: 'application/vnd.github+json',
    'x-github-api-version': '2022-11-28',
  }),

  async fetch(ctx) {
    const { repositories, pathPrefixes } = this.filters(ctx.config) as { repositories: string[]; pathPrefixes: string[] | null };
    const previous = (ctx.state ?? {}) as Record<string, RepoState>;
    const state: Record<string, RepoState> = {};
    const upserts: SyncItem[] = [];
    const tombstones: string[] = [];
    let stopped = false;
    for (const repository of repositories) {
      const s: RepoState = Object.assign({ treeSha: null, after: null }, previous[repository] ?? {});
      state[repository] = s;
      if (stopped) continue;
      if (ctx.budget.pagesLeft < 2) {
        stopped = true;
        continue;
      }
      ctx.budget.page();
      const repo = await ctx.request({ method: 'GET', url: `${ctx.baseUrl}/repos/${repository}` });
      if (repo.status === 404)
        throw new SyncError('invalid', `Provider repo does not know repository ${repository} (404); check config.repositories.`);
      if (repo.status !== 200) throw providerFailure('repo', repo, `GET /repos/${repository}`);
      const branch = String((repo.body as { default_branch?: string }).default_branch ?? 'main');
      ctx.budget.page();
      const treeRes = await ctx.request({
        method: 'GET',
        url: `${ctx.baseUrl}/repos/${repository}/git/trees/${encodeURIComponent(branch)}`,
        query: { recursive: 1 },
      });
      if (treeRes.status !== 200) throw providerFailure('repo', treeRes, `GET /repos/${repository}/git/trees/${branch}`);
      const tree = treeRes.body as { sha: string; tree: TreeEntry[]; truncated: boolean };
      if (tree.truncated) {
        throw new SyncError(
          'invalid',
          `Provider repo truncated the tree of ${repository} (too many entries for one recursive listing); narrow config.pathPrefixes (at most 50).`,
        );
      }
      if (tree.sha === s.treeSha && s.after === null) continue;
      const prefix = `repo:${repository}:`;
      const files = tree.tree
        .filter((e) => e.type === 'blob' && (!pathPrefixes || pathPrefixes.some((p) => e.path.startsWith(p))))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const pending = files.filter((e) => s.after === null || e.path > s.after);
      const known = await ctx.knownVersions(pending.map((e) => prefix + e.path));
      const changed = pending.filter((e) => known.get(prefix + e.path) !== e.sha);

      let index = 0;
      while (index < changed.length && !stopped) {
        // Take files in path order while the budget lasts (sizes come from the tree).
        const wave: TreeEntry[] = [];
        let waveBytes = 0;
        while (index + wave.length < changed.length && wave.length < BLOB_CONCURRENCY) {
          const entry = changed.at(index + wave.length)!; // in range: the loop's condition
          const size = entry.size ?? 0;
          if (ctx.budget.itemsLeft - wave.length <= 0 || size > ctx.budget.bytesLeft - waveBytes) {
            if (upserts.length === 0 && wave.length === 0 && size > ctx.budget.options.maxBytes) {
              throw new SyncError(
                'invalid',
                `Fetch budget exceeded: ${repository}/${entry.path} is ${size} bytes, more than maxBytes (${ctx.budget.options.maxBytes}); raise maxBytes or narrow config.pathPrefixes.`,
              );
            }
            stopped = true;
            break;
          }
          wave.push(entry);
          waveBytes += size;
        }
        const blobs = await Promise.all(
          wave.map(async (entry) => {
            ctx.budget.checkTime();
            const res = await ctx.request({ method: 'GET', url: `${ctx.baseUrl}/repos/${repository}/git/blobs/${entry.sha}` });
            if (res.status !== 200) throw providerFailure('repo', res, `GET /repos/${repository}/git/blobs/${entry.sha}`);
            const blob = res.body as { content?: string; encoding?: string };
            const bytes = Buffer.from(blob.content ?? '', blob.encoding === 'base64' ? 'base64' : 'utf8');
            return { entry, bytes };
          }),
        );
        for (const { entry, bytes } of blobs) {
          ctx.budget.take(bytes.length);
          s.after = entry.path;
          if (bytes.includes(0)) continue; // binary
          const kind = documentKindOf(undefined, entry.path);
          upserts.push({
            externalId: prefix + entry.path,
            title: entry.path,
            mimeType: kind ? mimeTypeOfKind(kind) : 'text/plain',
            content: storable(bytes.toString('utf8')),
            url: null,
            version: entry.sha,
            metadata: { repository, path: entry.path, branch },
          });
        }
        index += wave.length;
      }
      if (!stopped) {
        // The pass is complete: the tree is synced; stored files that left it are tombstoned.
        const inTree = new Set(files.map((e) => prefix + e.path));
        for (const id of await ctx.knownIds(prefix)) {
          const path = id.slice(prefix.length);
          if (!inTree.has(id) && (!pathPrefixes || pathPrefixes.some((p) => path.startsWith(p)))) tombstones.push(id);
        }
        s.treeSha = tree.sha;
        s.after = null;
      }
    }
    return { upserts, tombstones, cursor: state, fullSnapshot: false };
  },
};
