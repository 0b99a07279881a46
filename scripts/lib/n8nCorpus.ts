/**
 * The migration corpus: public n8n workflow exports, pinned by repository and commit in
 * scripts/bench/migrationCorpus.json and materialized outside the repository, under
 * `<cache>/corpus/` (default ~/.cache/svc-n8n/corpus; N8N_CACHE moves it). Only the small
 * manifest is committed: the exports are other people's files.
 *
 * Where the files come from, offline: each source (a folder of a repository at a commit) is read
 * with `git archive` from a local copy of that repository, `$MIGRATION_CORPUS_GIT/<owner>+<name>/repo`
 * (a bare mirror; default root /work/.mirror) or `$MIGRATION_CORPUS_GIT/<owner>+<name>` (a
 * clone). Nothing is downloaded.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export interface TreeSource {
  repo: string;
  commit: string;
  /** Folder inside the repository whose `*.json` files are read; `""` for the whole tree. */
  folder: string;
  license: string;
  /** Why this commit, when it is not simply the newest. */
  note?: string;
}

export interface CorpusManifest {
  sources: TreeSource[];
}

export interface CorpusEntry {
  /** `<owner>/<name>@<commit 12>:<path>`: stable across machines, the key of recorded references. */
  key: string;
  repo: string;
  commit: string;
  path: string;
  /** Absolute path of the materialized file. */
  file: string;
  sha256: string;
}

export interface LoadedCorpus {
  entries: CorpusEntry[];
  /** Sources or files that could not be materialized, each with what to do. */
  missing: string[];
}

/** Root of the n8n reference cache (installs, corpus, recorded outputs). */
export function n8nCacheRoot(): string {
  return process.env.N8N_CACHE || path.join(os.homedir(), '.cache', 'svc-n8n');
}

export function corpusDir(): string {
  return path.join(n8nCacheRoot(), 'corpus');
}

const repoDirName = (repo: string) => repo.replace('/', '+');

export function entryKey(repo: string, commit: string, file: string): string {
  return `${repo}@${commit.slice(0, 12)}:${file}`;
}

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

async function findLocalGit(repo: string): Promise<string | null> {
  const root = process.env.MIGRATION_CORPUS_GIT || '/work/.mirror';
  for (const candidate of [path.join(root, repoDirName(repo), 'repo'), path.join(root, repoDirName(repo))]) {
    if (!existsSync(candidate)) continue;
    const ok = await execFileP('git', [
      '--git-dir',
      existsSync(path.join(candidate, '.git')) ? path.join(candidate, '.git') : candidate,
      'rev-parse',
      '--git-dir',
    ])
      .then(() => true)
      .catch(() => false);
    if (ok) return existsSync(path.join(candidate, '.git')) ? path.join(candidate, '.git') : candidate;
  }
  return null;
}

async function listJson(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.name.startsWith('.')) continue; // .github, the archive marker
    if (e.isDirectory()) out.push(...(await listJson(p, base)));
    else if (e.name.endsWith('.json')) out.push(path.relative(base, p));
  }
  return out;
}

/** Extracts a tree source into the cache once (a `.complete` marker says it finished). */
async function materializeTree(source: TreeSource, log: (m: string) => void): Promise<{ root: string } | { missing: string }> {
  const root = path.join(corpusDir(), `${repoDirName(source.repo)}@${source.commit.slice(0, 12)}`);
  if (existsSync(path.join(root, '.complete'))) return { root };
  const gitDir = await findLocalGit(source.repo);
  if (!gitDir) {
    return {
      missing: `${source.repo}@${source.commit}: no local copy; clone it (git clone https://github.com/${source.repo} "${path.join(process.env.MIGRATION_CORPUS_GIT || '/work/.mirror', repoDirName(source.repo))}") and run again`,
    };
  }
  log(`extracting ${source.repo}@${source.commit.slice(0, 12)}:${source.folder || '(whole tree)'} into ${root}`);
  const tmp = `${root}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  try {
    const tar = path.join(tmp, '.archive.tar');
    await execFileP('git', [
      '--git-dir',
      gitDir,
      'archive',
      '--format=tar',
      '-o',
      tar,
      source.commit,
      ...(source.folder ? [source.folder] : []),
    ]);
    await execFileP('tar', ['-xf', tar, '-C', tmp]);
    await rm(tar);
    await writeFile(path.join(tmp, '.complete'), `${source.repo}@${source.commit}\n`);
    await rm(root, { recursive: true, force: true });
    await rename(tmp, root);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    return { missing: `${source.repo}@${source.commit}: git archive failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  return { root };
}

/**
 * Every export of the manifest, materialized, in a deterministic order (by source, then path).
 * Does not throw for an absent source: it is listed in `missing` and the rest is used.
 */
export async function loadCorpus(manifest: CorpusManifest, log: (m: string) => void = () => {}): Promise<LoadedCorpus> {
  const entries: CorpusEntry[] = [];
  const missing: string[] = [];
  for (const source of manifest.sources) {
    const got = await materializeTree(source, log);
    if ('missing' in got) {
      missing.push(got.missing);
      continue;
    }
    const folder = path.join(got.root, source.folder);
    for (const rel of (await listJson(folder)).sort()) {
      const repoPath = path.posix.join(source.folder || '.', rel.split(path.sep).join('/'));
      const file = path.join(folder, rel);
      entries.push({
        key: entryKey(source.repo, source.commit, repoPath),
        repo: source.repo,
        commit: source.commit,
        path: repoPath,
        file,
        sha256: sha256(await readFile(file)),
      });
    }
  }
  return { entries, missing };
}

/** An export's nodes as the corpus filters read them. */
interface ExportNode {
  type?: unknown;
  name?: unknown;
  disabled?: unknown;
  credentials?: unknown;
  parameters?: unknown;
}

/**
 * Node types that run on n8n without any outside service, credential or clock-dependent
 * behaviour of their own, so a workflow made only of them (and started by a manual trigger)
 * gives the same items every time it runs offline. Wait and schedules are left out (time),
 * HTTP Request and every SaaS node (network), Execute Workflow (needs the callee).
 */
export const OFFLINE_NODE_TYPES: ReadonlySet<string> = new Set(
  [
    'manualTrigger',
    'start',
    'set',
    'if',
    'filter',
    'switch',
    'merge',
    'code',
    'function',
    'functionItem',
    'noOp',
    'stickyNote',
    'splitOut',
    'aggregate',
    'itemLists',
    'sort',
    'limit',
    'removeDuplicates',
    'renameKeys',
    'summarize',
    'compareDatasets',
    'splitInBatches',
    'dateTime',
    'crypto',
    'html',
    'xml',
    'markdown',
    'stopAndError',
  ].map((t) => `n8n-nodes-base.${t}`),
);

const MANUAL_TRIGGERS = new Set(['n8n-nodes-base.manualTrigger', 'n8n-nodes-base.start']);

/**
 * Whether an export can be run for parity: started by a manual trigger that is connected, every node of an
 * offline type, none needing a credential, and no expression reading the clock, randomness or
 * the environment (those give other items on every run, in either tool).
 */
export function runnableOffline(exported: unknown): { ok: true } | { ok: false; reason: string } {
  if (!exported || typeof exported !== 'object' || !Array.isArray((exported as { nodes?: unknown }).nodes))
    return { ok: false, reason: 'not a workflow export' };
  const nodes = (exported as { nodes: ExportNode[] }).nodes;
  const active = nodes.filter((n) => n.disabled !== true && n.type !== 'n8n-nodes-base.stickyNote');
  const triggers = active.filter((n) => typeof n.type === 'string' && MANUAL_TRIGGERS.has(n.type));
  if (triggers.length === 0) return { ok: false, reason: 'no manual trigger' };
  // Some public exports lost their connections: only the trigger would run, in either tool.
  const connections = (exported as { connections?: Record<string, { main?: unknown[][] }> }).connections ?? {};
  if (!triggers.some((t) => (connections[String(t.name)]?.main ?? []).some((targets) => Array.isArray(targets) && targets.length > 0)))
    return { ok: false, reason: 'the manual trigger is connected to nothing' };
  const foreign = active.find((n) => typeof n.type !== 'string' || !OFFLINE_NODE_TYPES.has(n.type));
  if (foreign) return { ok: false, reason: `node type ${String(foreign.type)} needs the network or time` };
  if (active.some((n) => n.credentials && typeof n.credentials === 'object' && Object.keys(n.credentials).length > 0))
    return { ok: false, reason: 'a node needs a credential' };
  const text = JSON.stringify(active.map((n) => n.parameters ?? null));
  const volatile =
    /"action":"generate"|\$now|\$today|new Date\(|Date\.now|Math\.random|\$execution|\$env|crypto\.random|randomUUID|\$workflow\.id/.exec(
      text,
    );
  if (volatile) return { ok: false, reason: `reads ${volatile[0]} (differs on every run)` };
  return { ok: true };
}
