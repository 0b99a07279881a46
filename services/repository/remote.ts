import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { httpRequest, OutboundError } from '../kernel/outbound';
import { loadGit } from './git';

/**
 * Smart-HTTP Git remotes through isomorphic-git, with every request sent by `httpRequest`
 * (services/kernel/outbound.ts): the SSRF guard checks the remote's address on each request and
 * redirect, and the response size is capped. Each operation works in a fresh temporary bare
 * repository (fetch what it needs, read or commit, push), removed afterwards: no state is kept
 * between calls or shared between processes.
 */

/** Largest response of one Git request (a fetch's packfile). */
export const GIT_RESPONSE_MAX_BYTES = 64 * 1024 * 1024;
const GIT_REQUEST_TIMEOUT_MS = 60_000;

export class GitRemoteError extends Error {
  constructor(
    readonly kind: 'refused' | 'auth' | 'unreachable' | 'rejected',
    message: string,
  ) {
    super(message);
    this.name = 'GitRemoteError';
  }
}

async function collect(body: AsyncIterableIterator<Uint8Array> | undefined): Promise<Uint8Array | undefined> {
  if (!body) return undefined;
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return Buffer.concat(parts);
}

async function* once(bytes: Uint8Array): AsyncIterableIterator<Uint8Array> {
  yield bytes;
}

/** isomorphic-git's HTTP client on top of the guarded `httpRequest`. */
export function guardedGitHttp(opts: { allowPrivateNetworks: boolean }): HttpClient {
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const method = (req.method ?? 'GET').toUpperCase();
      let res;
      try {
        res = await httpRequest(
          { method, url: req.url, headers: req.headers ?? {}, body: await collect(req.body), timeoutMs: GIT_REQUEST_TIMEOUT_MS },
          { allowPrivateNetworks: opts.allowPrivateNetworks, responseType: 'bytes', maxResponseBytes: GIT_RESPONSE_MAX_BYTES },
        );
      } catch (err) {
        if (err instanceof OutboundError && err.code === 'refused')
          throw new GitRemoteError('refused', `The Git remote is not allowed: ${err.message}`);
        if (err instanceof OutboundError) throw new GitRemoteError('unreachable', `The Git remote could not be reached: ${err.message}`);
        throw err;
      }
      const body = res.body as Buffer;
      return {
        url: req.url,
        method,
        statusCode: res.status,
        statusMessage: String(res.status),
        headers: res.headers,
        body: once(new Uint8Array(body)),
      };
    },
  };
}

export interface GitRemote {
  url: string;
  /** `Authorization` header value: Basic (user name and token) or Bearer. */
  authorization: string | null;
  allowPrivateNetworks: boolean;
}

/** The Authorization header of a `repo` credential: HTTP Basic when it names a user, else a bearer token. */
export function gitAuthorization(value: { token?: unknown; username?: unknown }): string | null {
  if (typeof value.token !== 'string' || value.token === '') return null;
  if (typeof value.username === 'string' && value.username !== '')
    return `Basic ${Buffer.from(`${value.username}:${value.token}`).toString('base64')}`;
  return `Bearer ${value.token}`;
}

function translate(err: unknown): never {
  if (err instanceof GitRemoteError) throw err;
  const e = err as { code?: string; data?: { statusCode?: number }; message?: string };
  if (e?.code === 'HttpError' && (e.data?.statusCode === 401 || e.data?.statusCode === 403)) {
    throw new GitRemoteError('auth', `The Git remote refused the credentials (HTTP ${e.data.statusCode}).`);
  }
  if (e?.code === 'HttpError') throw new GitRemoteError('unreachable', `The Git remote answered HTTP ${e.data?.statusCode}.`);
  if (e?.code === 'SmartHttpError' || e?.code === 'UnknownTransportError' || e?.code === 'UrlParseError')
    throw new GitRemoteError('unreachable', `The Git remote is not a smart-HTTP Git server: ${e.message}`);
  throw err;
}

const headersOf = (remote: GitRemote) => (remote.authorization ? { Authorization: remote.authorization } : undefined);

/** The branches of the remote (name → commit), by its advertised refs. */
export async function listRemoteBranches(remote: GitRemote): Promise<Map<string, string>> {
  const git = await loadGit();
  try {
    const refs = await git.listServerRefs({
      http: guardedGitHttp(remote),
      url: remote.url,
      headers: headersOf(remote),
      prefix: 'refs/heads/',
    });
    return new Map(refs.map((r) => [r.ref.slice('refs/heads/'.length), r.oid]));
  } catch (err) {
    translate(err);
  }
}

/**
 * Runs `work` on a temporary bare repository holding the remote's `branches` (those that exist,
 * as local branches). `push(branch)` force-pushes a local branch to the remote.
 */
export async function withRemoteCopy<T>(
  remote: GitRemote,
  branches: string[],
  work: (gitdir: string, push: (branch: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const git = await loadGit();
  const gitdir = await mkdtemp(path.join(os.tmpdir(), 'svc-git-remote-'));
  const http = guardedGitHttp(remote);
  const headers = headersOf(remote);
  try {
    await git.init({ fs, gitdir, bare: true, defaultBranch: branches[0] ?? 'main' });
    await git.addRemote({ fs, gitdir, remote: 'origin', url: remote.url });
    const advertised = await listRemoteBranches(remote);
    for (const branch of new Set(branches)) {
      if (!advertised.has(branch)) continue;
      try {
        const fetched = await git.fetch({ fs, http, gitdir, remote: 'origin', ref: branch, singleBranch: true, tags: false, headers });
        if (fetched.fetchHead) await git.writeRef({ fs, gitdir, ref: `refs/heads/${branch}`, value: fetched.fetchHead, force: true });
      } catch (err) {
        translate(err);
      }
    }
    const push = async (branch: string) => {
      let result;
      try {
        result = await git.push({ fs, http, gitdir, remote: 'origin', ref: branch, remoteRef: branch, force: true, headers });
      } catch (err) {
        translate(err);
      }
      if (!result.ok)
        throw new GitRemoteError(
          'rejected',
          `The Git remote rejected the push of ${branch}: ${result.error ?? JSON.stringify(result.refs)}`,
        );
    };
    return await work(gitdir, push);
  } finally {
    await rm(gitdir, { recursive: true, force: true });
  }
}
