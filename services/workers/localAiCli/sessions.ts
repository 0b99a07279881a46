/**
 * Local AI CLI sessions of a workspace: prepare (its own configuration directory), verify
 * (version and sign-in, measured by running the CLI), login (the CLI's browser login, whose
 * callback URL the user brings back), token (cliA only: a pasted token, stored as an encrypted
 * credential), models, disconnect. Tokens are never answered, logged or put in an error; CLI
 * output is never shown except the version line and the model list.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  CredentialSchema,
  LocalAiCliSessionSchema,
  type LocalAiCliKind,
  type LocalAiCliSession,
  type LocalAiCliSessionStatus,
} from '../../../db/entities';
import { recordAudit } from '../../kernel/audit';
import type { LocalAiCliConfig } from '../../kernel/config';
import { openCredential, requireKeyring, sealCredentialValue, type CredentialKeySettings } from '../../credentials';
import { conflict, invalidInput, timedOut, unavailable } from '../../kernel/errors';
import { newId } from '../../kernel/ids';
import { credentialNamedAnyCase, insertLocalAiCliSessionOnce } from '../store';
import type { WorkspacePrincipal } from '../../kernel/principal';
import { SealedValueError } from '../../kernel/secrets';
import { endLogin, LOGIN_TTL_MS, pendingLogin, pendingLoginsOf, registerLogin } from './logins';
import { CLI_PROTOCOLS } from './protocol';
import { isDirectory, killCli, runCli, spawnCli, type CliRunResult } from './runner';

export interface LocalAiCliDeps {
  config: LocalAiCliConfig;
  keys: CredentialKeySettings;
}

export type SessionAction = 'prepare' | 'verify' | 'disconnect';

export type ReadinessStatus = LocalAiCliSessionStatus | 'not_configured';

export interface LocalAiCliReadiness {
  workspaceId: string;
  kind: LocalAiCliKind;
  action: SessionAction | 'login' | 'callback' | 'token';
  status: ReadinessStatus;
  /** An executable path is configured for this kind. */
  configured: boolean;
  /** The executable started and printed its version; null when not checked. */
  installed: boolean | null;
  version: string | null;
  authenticated: boolean;
  authMethod: 'token' | 'login' | null;
  /** The workspace's configuration directory of this CLI exists. */
  configDirReady: boolean;
  loginPending: boolean;
  loginExpiresAt: string | null;
  lastVerifiedAt: string | null;
  message: string;
  nextAction: string | null;
}

const NEXT_ACTIONS: Record<ReadinessStatus, string | null> = {
  not_configured: 'Ask the operator to install this CLI on the server and configure its path.',
  not_installed: 'Ask the operator to check the CLI installation: the configured executable does not start.',
  unavailable: 'Verify again; if the CLI keeps hanging, ask the operator to check it.',
  not_prepared: 'Prepare the session (action prepare).',
  prepared: 'Sign in: start a login, or (cliA) send a token.',
  needs_login: 'Sign in: start a login, or (cliA) send a token.',
  login_pending: 'Open the authorization URL, then send the callback URL it redirects to.',
  connected: null,
  disconnected: 'Prepare the session again to reconnect.',
};

function message(kind: LocalAiCliKind, status: ReadinessStatus, timeoutMs: number, authMethod: 'token' | 'login' | null): string {
  switch (status) {
    case 'not_configured':
      return `${kind} is not configured on this server.`;
    case 'not_installed':
      return `The ${kind} executable could not be started.`;
    case 'unavailable':
      return `${kind} did not answer within ${timeoutMs} ms.`;
    case 'not_prepared':
      return `${kind} is installed; the workspace's session is not prepared.`;
    case 'prepared':
    case 'needs_login':
      return `${kind} is not signed in for this workspace.`;
    case 'login_pending':
      return `A ${kind} login is waiting for its callback.`;
    case 'connected':
      return `${kind} is connected (${authMethod === 'token' ? 'token' : 'login'}).`;
    case 'disconnected':
      return `${kind} was disconnected; its token and workspace directory were removed.`;
  }
}

const hashState = (state: string | null) =>
  createHash('sha256')
    .update(state ?? '')
    .digest('hex');

/** The workspace's configuration directory of one CLI (HOME of every process run for it). */
export function configDirOf(config: LocalAiCliConfig, workspaceId: string, kind: LocalAiCliKind): string {
  if (!/^[A-Za-z0-9_-]+$/.test(workspaceId)) throw invalidInput('Invalid workspace id.');
  return path.join(config.rootDir, workspaceId, kind);
}

function requireExecutable(config: LocalAiCliConfig, kind: LocalAiCliKind): string {
  const executable = config.paths[kind];
  // A 409, not a 503: nothing is down, this deployment has no such CLI (and will not until an operator adds it).
  if (!executable) throw conflict(`${kind} is not configured on this server.`);
  return executable;
}

async function findRow(em: EntityManager, workspaceId: string, kind: LocalAiCliKind): Promise<LocalAiCliSession | null> {
  return em.findOne(LocalAiCliSessionSchema, { workspaceId, kind });
}

async function upsertRow(
  em: EntityManager,
  workspaceId: string,
  kind: LocalAiCliKind,
  patch: Partial<LocalAiCliSession>,
): Promise<LocalAiCliSession> {
  const now = new Date();
  let row = await findRow(em, workspaceId, kind);
  if (!row) {
    // Two first requests of a workspace may race: the row is created once, both then update it.
    await insertLocalAiCliSessionOnce(em, { id: newId('lac'), workspaceId, kind, now });
    row = await em.findOneOrFail(LocalAiCliSessionSchema, { workspaceId, kind });
  }
  Object.assign(row, patch, { updatedAt: now });
  await em.flush();
  return row;
}

/** The stored token of the session (decrypted), or null when it has none or it cannot be decrypted. */
async function storedToken(em: EntityManager, deps: LocalAiCliDeps, row: LocalAiCliSession | null): Promise<string | null> {
  if (!row?.credentialId) return null;
  const credential = await em.findOne(CredentialSchema, { id: row.credentialId, workspaceId: row.workspaceId });
  if (!credential) return null;
  try {
    const value = openCredential(requireKeyring(deps.keys), credential);
    return typeof value.token === 'string' ? value.token : null;
  } catch (err) {
    if (err instanceof SealedValueError) return null;
    throw err;
  }
}

function tokenEnv(kind: LocalAiCliKind, token: string | null): Record<string, string> {
  const name = CLI_PROTOCOLS[kind].tokenEnv;
  return name && token ? { [name]: token } : {};
}

/** Runs one protocol command of the workspace's CLI with its token, if any. */
async function run(
  deps: LocalAiCliDeps,
  workspaceId: string,
  kind: LocalAiCliKind,
  args: string[],
  token: string | null,
): Promise<CliRunResult> {
  return runCli({
    executable: requireExecutable(deps.config, kind),
    args,
    configDir: configDirOf(deps.config, workspaceId, kind),
    extraEnv: tokenEnv(kind, token),
    timeoutMs: deps.config.timeoutMs,
  });
}

function view(
  deps: LocalAiCliDeps,
  workspaceId: string,
  kind: LocalAiCliKind,
  action: LocalAiCliReadiness['action'],
  measured: {
    status: ReadinessStatus;
    installed: boolean | null;
    version: string | null;
    configDirReady: boolean;
    authMethod: 'token' | 'login' | null;
  },
  row: LocalAiCliSession | null,
): LocalAiCliReadiness {
  const login = pendingLogin(workspaceId, kind);
  const authMethod = measured.status === 'connected' ? measured.authMethod : null;
  return {
    workspaceId,
    kind,
    action,
    status: measured.status,
    configured: Boolean(deps.config.paths[kind]),
    installed: measured.installed,
    version: measured.version,
    authenticated: measured.status === 'connected',
    authMethod,
    configDirReady: measured.configDirReady,
    loginPending: login !== null,
    loginExpiresAt: login ? login.expiresAt.toISOString() : null,
    lastVerifiedAt: row?.lastVerifiedAt ? row.lastVerifiedAt.toISOString() : null,
    message: message(kind, measured.status, deps.config.timeoutMs, authMethod),
    nextAction: NEXT_ACTIONS[measured.status],
  };
}

/**
 * Measures the session by running the CLI (version, then sign-in status with the stored token)
 * and stores the outcome as the session's last verification. A database failure after the
 * measurement propagates (the route answers 500).
 */
async function measureAndStore(
  em: EntityManager,
  deps: LocalAiCliDeps,
  workspaceId: string,
  kind: LocalAiCliKind,
  action: LocalAiCliReadiness['action'],
): Promise<LocalAiCliReadiness> {
  const row = await findRow(em, workspaceId, kind);
  const configDirReady = deps.config.paths[kind] ? await isDirectory(configDirOf(deps.config, workspaceId, kind)) : false;
  const base = {
    installed: null as boolean | null,
    version: null as string | null,
    configDirReady,
    authMethod: null as 'token' | 'login' | null,
  };
  if (!deps.config.paths[kind]) return view(deps, workspaceId, kind, action, { ...base, status: 'not_configured' }, row);

  const version = await run(deps, workspaceId, kind, CLI_PROTOCOLS[kind].version, null);
  let measured: Parameters<typeof view>[4];
  if (version.kind === 'timeout') measured = { ...base, status: 'unavailable' };
  else if (version.kind === 'notStarted' || version.code !== 0) measured = { ...base, installed: false, status: 'not_installed' };
  else {
    const installed = { ...base, installed: true, version: (version.stdout.split('\n')[0] ?? '').trim().slice(0, 100) || null };
    if (!configDirReady) measured = { ...installed, status: 'not_prepared' };
    else if (pendingLogin(workspaceId, kind)) measured = { ...installed, status: 'login_pending' };
    else {
      const token = await storedToken(em, deps, row);
      const auth = await run(deps, workspaceId, kind, CLI_PROTOCOLS[kind].authStatus, token);
      if (auth.kind === 'timeout') measured = { ...installed, status: 'unavailable' };
      else if (auth.kind === 'exited' && auth.code === 0)
        measured = { ...installed, status: 'connected', authMethod: token ? 'token' : 'login' };
      else measured = { ...installed, status: 'needs_login' };
    }
  }
  const stored = await upsertRow(em, workspaceId, kind, {
    status: measured.status as LocalAiCliSessionStatus,
    version: measured.version ?? row?.version ?? null,
    authMethod: measured.status === 'connected' ? measured.authMethod : (row?.authMethod ?? null),
    lastVerifiedAt: new Date(),
  });
  return view(deps, workspaceId, kind, action, measured, stored);
}

/** `POST /workers/local-ai-cli/session`: prepare, verify or disconnect the workspace's session with `kind`. */
export async function localAiCliSession(
  em: EntityManager,
  deps: LocalAiCliDeps,
  principal: WorkspacePrincipal,
  action: SessionAction,
  kind: LocalAiCliKind,
): Promise<LocalAiCliReadiness> {
  const { workspaceId } = principal;
  if (action === 'disconnect') return disconnect(em, deps, principal, kind);
  if (action === 'prepare' && deps.config.paths[kind])
    await mkdir(configDirOf(deps.config, workspaceId, kind), { recursive: true, mode: 0o700 });
  return measureAndStore(em, deps, workspaceId, kind, action);
}

async function disconnect(
  em: EntityManager,
  deps: LocalAiCliDeps,
  principal: WorkspacePrincipal,
  kind: LocalAiCliKind,
): Promise<LocalAiCliReadiness> {
  const { workspaceId } = principal;
  endLogin(workspaceId, kind);
  const row = await findRow(em, workspaceId, kind);
  if (row?.credentialId) {
    const credential = await em.findOne(CredentialSchema, { id: row.credentialId, workspaceId });
    if (credential) em.remove(credential);
  }
  await rm(configDirOf(deps.config, workspaceId, kind), { recursive: true, force: true });
  recordAudit(em, principal, {
    action: 'local_ai_cli.disconnect',
    severity: 'info',
    workspaceId,
    targetType: 'local_ai_cli',
    targetId: kind,
  });
  const stored = await upsertRow(em, workspaceId, kind, {
    status: 'disconnected',
    authMethod: null,
    credentialId: null,
    loginStateHash: null,
    loginExpiresAt: null,
  });
  return view(
    deps,
    workspaceId,
    kind,
    'disconnect',
    { status: 'disconnected', installed: null, version: null, configDirReady: false, authMethod: null },
    stored,
  );
}

/** The first http(s) URL a line of CLI output holds. */
const URL_IN_LINE = /https?:\/\/[^\s"'<>]+/;

/** A loopback http address (the only callback target the service ever calls). */
function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) && url.port !== '';
}

/**
 * `POST /workers/local-ai-cli/login`: starts the CLI's login in the workspace's directory and
 * answers its authorization URL once the CLI prints it (within the CLI time budget). A previous
 * pending login of the same kind is ended first.
 */
export async function startLocalAiCliLogin(em: EntityManager, deps: LocalAiCliDeps, principal: WorkspacePrincipal, kind: LocalAiCliKind) {
  const { workspaceId } = principal;
  const executable = requireExecutable(deps.config, kind);
  const configDir = configDirOf(deps.config, workspaceId, kind);
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  endLogin(workspaceId, kind);
  const token = await storedToken(em, deps, await findRow(em, workspaceId, kind));
  const child = await spawnCli({ executable, args: CLI_PROTOCOLS[kind].login, configDir, extraEnv: tokenEnv(kind, token) });
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  const authorizationUrl = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      killCli(child);
      reject(timedOut(`${kind} did not give an authorization URL within ${deps.config.timeoutMs} ms.`));
    }, deps.config.timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered = (buffered + chunk.toString('utf8')).slice(-64 * 1024);
      const found = URL_IN_LINE.exec(buffered);
      if (found) {
        clearTimeout(timer);
        resolve(found[0]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        code === null
          ? unavailable(`The ${kind} executable could not be started.`)
          : unavailable(`${kind} login exited with code ${code} before giving an authorization URL.`),
      );
    });
  });
  // The login process lives on until its callback; it must not keep the API process alive.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  child.stdout?.resume();
  child.stderr?.resume();

  const parsed = new URL(authorizationUrl);
  const redirectParam = parsed.searchParams.get('redirect_uri');
  let redirect: URL | null = null;
  if (redirectParam) {
    try {
      const candidate = new URL(redirectParam);
      if (isLoopbackHttp(candidate)) redirect = candidate;
    } catch {
      redirect = null;
    }
  }
  const state = parsed.searchParams.get('state');
  const expiresAt = new Date(Date.now() + LOGIN_TTL_MS);
  registerLogin({ workspaceId, kind, child, redirect, state, expiresAt, exited });
  const row = await upsertRow(em, workspaceId, kind, {
    status: 'login_pending',
    loginStateHash: hashState(state),
    loginExpiresAt: expiresAt,
  });
  const session = view(
    deps,
    workspaceId,
    kind,
    'login',
    { status: 'login_pending', installed: true, version: row.version, configDirReady: true, authMethod: null },
    row,
  );
  return { kind, authorizationUrl, expiresAt: expiresAt.toISOString(), session };
}

/** GETs the CLI's own loopback callback (the address the pending login announced; only the query comes from the caller). */
function deliverCallback(redirect: URL, callback: URL, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: redirect.hostname === 'localhost' ? '127.0.0.1' : redirect.hostname.replace(/^\[|\]$/g, ''),
        port: Number(redirect.port),
        path: `${redirect.pathname}${callback.search}`,
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve());
      },
    );
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', reject);
  });
}

/**
 * `POST /workers/local-ai-cli/callback`: hands the URL the login redirected the browser to back
 * to the workspace's pending login it belongs to (same loopback port and path, same `state`),
 * waits for the CLI to finish, then verifies the session.
 */
export async function completeLocalAiCliLogin(
  em: EntityManager,
  deps: LocalAiCliDeps,
  principal: WorkspacePrincipal,
  callbackUrl: string,
): Promise<LocalAiCliReadiness> {
  const { workspaceId } = principal;
  let callback: URL;
  try {
    callback = new URL(callbackUrl);
  } catch {
    throw invalidInput('callbackUrl must be the http://localhost address the login redirected to.');
  }
  if (!isLoopbackHttp(callback)) throw invalidInput('callbackUrl must be the http://localhost address the login redirected to.');
  const state = callback.searchParams.get('state');
  const login = pendingLoginsOf(workspaceId).find(
    (l) =>
      l.redirect !== null &&
      l.redirect.port === callback.port &&
      l.redirect.pathname === callback.pathname &&
      (l.state === null || l.state === state),
  );
  if (!login || !login.redirect) throw invalidInput('No pending login of this workspace matches the callback URL.');
  const { kind } = login;
  try {
    await deliverCallback(login.redirect, callback, deps.config.timeoutMs);
  } catch {
    endLogin(workspaceId, kind);
    throw unavailable(`${kind} did not accept the callback.`);
  }
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    login.exited,
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), deps.config.timeoutMs))),
  ]).finally(() => clearTimeout(timer));
  if (code === 'timeout') {
    endLogin(workspaceId, kind);
    throw timedOut(`${kind} did not finish the login within ${deps.config.timeoutMs} ms.`);
  }
  await upsertRow(em, workspaceId, kind, { loginStateHash: null, loginExpiresAt: null });
  if (code !== 0) {
    await upsertRow(em, workspaceId, kind, { status: 'needs_login' });
    throw invalidInput(`${kind} refused the login (exit code ${code}).`);
  }
  return measureAndStore(em, deps, workspaceId, kind, 'callback');
}

const tokenCredentialName = (kind: LocalAiCliKind) => `local-ai-cli/${kind}`;

/**
 * `POST /workers/local-ai-cli/token` (cliA): checks the token with the CLI, then stores it as
 * the workspace's encrypted `cliA` credential (replacing an earlier one) and verifies.
 */
export async function storeLocalAiCliToken(
  em: EntityManager,
  deps: LocalAiCliDeps,
  principal: WorkspacePrincipal,
  kind: 'cliA',
  token: string,
): Promise<LocalAiCliReadiness> {
  const { workspaceId } = principal;
  requireExecutable(deps.config, kind);
  const ring = requireKeyring(deps.keys);
  await mkdir(configDirOf(deps.config, workspaceId, kind), { recursive: true, mode: 0o700 });
  const check = await run(deps, workspaceId, kind, CLI_PROTOCOLS[kind].authStatus, token);
  if (check.kind === 'timeout') throw timedOut(`${kind} did not answer within ${deps.config.timeoutMs} ms.`);
  if (check.kind === 'notStarted') throw unavailable(`The ${kind} executable could not be started.`);
  if (check.code !== 0) throw invalidInput(`${kind} refused the token.`);

  endLogin(workspaceId, kind);
  const row = await findRow(em, workspaceId, kind);
  const now = new Date();
  let credential = row?.credentialId ? await em.findOne(CredentialSchema, { id: row.credentialId, workspaceId }) : null;
  if (!credential) {
    const name = tokenCredentialName(kind);
    const clash = await credentialNamedAnyCase(em, workspaceId, name);
    if (clash && clash.type !== kind)
      throw conflict(`A credential named "${name}" already exists in this workspace; rename it to sign ${kind} in with a token.`);
    if (clash) credential = await em.findOne(CredentialSchema, { id: clash.id, workspaceId });
  }
  if (!credential) {
    const id = newId('cred');
    credential = em.create(CredentialSchema, {
      id,
      workspaceId,
      name: tokenCredentialName(kind),
      type: kind,
      secretEncrypted: sealCredentialValue(ring, workspaceId, id, { token }),
      source: 'inline',
      envVar: null,
      createdById: principal.userId,
      allowedHosts: [],
      createdAt: now,
      updatedAt: now,
    });
  } else {
    credential.secretEncrypted = sealCredentialValue(ring, workspaceId, credential.id, { token });
    credential.updatedAt = now;
  }
  recordAudit(em, principal, {
    action: 'local_ai_cli.token',
    severity: 'info',
    workspaceId,
    targetType: 'credential',
    targetId: credential.id,
    metadata: { kind },
  });
  await upsertRow(em, workspaceId, kind, { credentialId: credential.id, authMethod: 'token', loginStateHash: null, loginExpiresAt: null });
  return measureAndStore(em, deps, workspaceId, kind, 'token');
}

export interface LocalAiCliModel {
  id: string;
  name: string;
}

const MAX_MODELS = 200;

function parseModels(stdout: string): LocalAiCliModel[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return null;
  }
  const list = Array.isArray(parsed)
    ? parsed
    : Array.isArray((parsed as { models?: unknown })?.models)
      ? (parsed as { models: unknown[] }).models
      : null;
  if (!list) return null;
  const models: LocalAiCliModel[] = [];
  for (const entry of list.slice(0, MAX_MODELS)) {
    const id =
      typeof entry === 'string' ? entry : typeof (entry as { id?: unknown })?.id === 'string' ? (entry as { id: string }).id : null;
    if (!id) continue;
    const name = typeof (entry as { name?: unknown })?.name === 'string' ? (entry as { name: string }).name : id;
    models.push({ id: id.slice(0, 200), name: name.slice(0, 200) });
  }
  return models;
}

/** `GET /workers/local-ai-cli/models`: the models the workspace's CLI offers (as signed in for this workspace). */
export async function listLocalAiCliModels(em: EntityManager, deps: LocalAiCliDeps, principal: WorkspacePrincipal, kind: LocalAiCliKind) {
  const { workspaceId } = principal;
  requireExecutable(deps.config, kind);
  const token = await storedToken(em, deps, await findRow(em, workspaceId, kind));
  const result = await run(deps, workspaceId, kind, CLI_PROTOCOLS[kind].models, token);
  if (result.kind === 'timeout') throw timedOut(`${kind} did not answer within ${deps.config.timeoutMs} ms.`);
  if (result.kind === 'notStarted') throw unavailable(`The ${kind} executable could not be started.`);
  if (result.code !== 0) throw conflict(`${kind} could not list its models (exit code ${result.code}); verify the session is connected.`);
  const models = parseModels(result.stdout);
  if (!models) throw unavailable(`${kind} answered a model list that is not JSON.`);
  return { kind, models };
}

/** The stored state of the workspace's sessions, per kind, without running any CLI (for the worker status). */
export async function storedLocalAiCliState(em: EntityManager, config: LocalAiCliConfig, workspaceId: string) {
  const rows = await em.find(LocalAiCliSessionSchema, { workspaceId });
  const of = (kind: LocalAiCliKind) => {
    const row = rows.find((r) => r.kind === kind) ?? null;
    const configured = Boolean(config.paths[kind]);
    return {
      kind,
      configured,
      status: !configured ? ('not_configured' as const) : (row?.status ?? ('not_prepared' as const)),
      connected: configured && row?.status === 'connected',
      authMethod: row?.status === 'connected' ? row.authMethod : null,
      loginPending: pendingLogin(workspaceId, kind) !== null,
      lastVerifiedAt: row?.lastVerifiedAt ? row.lastVerifiedAt.toISOString() : null,
    };
  };
  return { cliA: of('cliA'), cliB: of('cliB') };
}
