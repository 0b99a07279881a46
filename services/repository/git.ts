import fs from 'node:fs';
import { lazyModule } from '../kernel/lazyModule';

/**
 * Git on a bare repository through isomorphic-git (no work tree, no hand-made objects): read
 * a file at a ref, and commit one file onto a branch started from another.
 */
const AUTHOR = { name: 'Workflow service', email: 'workflows@localhost' };

/** isomorphic-git, loaded with the first repository operation (services/kernel/lazyModule.ts). */
export const loadGit = lazyModule(async () => (await import('isomorphic-git')).default);

export async function resolveRef(gitdir: string, ref: string): Promise<string | null> {
  const git = await loadGit();
  try {
    return await git.resolveRef({ fs, gitdir, ref: /^[0-9a-f]{40}$/.test(ref) ? ref : `refs/heads/${ref}` });
  } catch {
    if (/^[0-9a-f]{40}$/.test(ref)) return ref;
    return null;
  }
}

export async function readFileAt(gitdir: string, ref: string, filepath: string): Promise<{ commit: string; text: string } | null> {
  const commit = await resolveRef(gitdir, ref);
  if (!commit) return null;
  const git = await loadGit();
  try {
    const { blob } = await git.readBlob({ fs, gitdir, oid: commit, filepath });
    return { commit, text: Buffer.from(blob).toString('utf8') };
  } catch {
    return null;
  }
}

type Entry = { mode: string; path: string; oid: string; type: 'blob' | 'tree' | 'commit' };

async function putPath(gitdir: string, treeOid: string | null, parts: string[], blobOid: string): Promise<string> {
  const git = await loadGit();
  const entries: Entry[] = treeOid ? (await git.readTree({ fs, gitdir, oid: treeOid })).tree : [];
  const [head, ...rest] = parts;
  if (head === undefined) throw new Error('putPath needs a non-empty path');
  const existing = entries.find((e) => e.path === head);
  const oid = rest.length === 0 ? blobOid : await putPath(gitdir, existing?.type === 'tree' ? existing.oid : null, rest, blobOid);
  const next: Entry =
    rest.length === 0 ? { mode: '100644', path: head, oid, type: 'blob' } : { mode: '040000', path: head, oid, type: 'tree' };
  const tree = [...entries.filter((e) => e.path !== head), next];
  const key = (e: Entry) => (e.type === 'tree' ? `${e.path}/` : e.path);
  tree.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
  return git.writeTree({ fs, gitdir, tree });
}

/** Commits `text` at `filepath` on top of `baseBranch` and points `branch` at it (moved, not merged). */
export async function commitFileOnBranch(
  gitdir: string,
  baseBranch: string,
  branch: string,
  filepath: string,
  text: string,
  message: string,
): Promise<string> {
  const parent = await resolveRef(gitdir, baseBranch);
  if (!parent) throw new Error(`Branch "${baseBranch}" does not exist in the repository.`);
  const git = await loadGit();
  const { commit } = await git.readCommit({ fs, gitdir, oid: parent });
  const blob = await git.writeBlob({ fs, gitdir, blob: Buffer.from(text, 'utf8') });
  const tree = await putPath(gitdir, commit.tree, filepath.split('/').filter(Boolean), blob);
  const oid = await git.commit({ fs, gitdir, message, author: AUTHOR, tree, parent: [parent], noUpdateBranch: true });
  await git.writeRef({ fs, gitdir, ref: `refs/heads/${branch}`, value: oid, force: true });
  return oid;
}
