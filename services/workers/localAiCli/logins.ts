/**
 * Logins waiting for their callback. A login is a CLI process that printed its authorization
 * URL and listens on its loopback redirect address; it lives in the API process that started
 * it (a callback reaching another API process finds no pending login), for at most
 * LOGIN_TTL_MS, after which it is killed.
 */
import type { ChildProcess } from 'node:child_process';
import type { LocalAiCliKind } from '../../../db/entities';
import { killCli } from './runner';

export const LOGIN_TTL_MS = 10 * 60_000;

export interface PendingLogin {
  workspaceId: string;
  kind: LocalAiCliKind;
  child: ChildProcess;
  /** The CLI's loopback callback address; null when its URL named none (the CLI finishes on its own). */
  redirect: URL | null;
  state: string | null;
  expiresAt: Date;
  /** Settles with the exit code when the process ends. */
  exited: Promise<number | null>;
  timer: NodeJS.Timeout;
}

const pending = new Map<string, PendingLogin>();
const keyOf = (workspaceId: string, kind: LocalAiCliKind) => `${workspaceId}\u0000${kind}`;

export function pendingLogin(workspaceId: string, kind: LocalAiCliKind): PendingLogin | null {
  const login = pending.get(keyOf(workspaceId, kind));
  return login && login.child.exitCode === null && login.child.signalCode === null ? login : null;
}

/** The workspace's pending logins (only its own: the map is keyed by workspace). */
export function pendingLoginsOf(workspaceId: string): PendingLogin[] {
  return (['cliA', 'cliB'] as const).map((kind) => pendingLogin(workspaceId, kind)).filter((l): l is PendingLogin => l !== null);
}

let exitHookInstalled = false;

/** Kills every pending login (the API process is exiting; a login must not outlive it). */
export function endAllLogins(): void {
  for (const login of [...pending.values()]) endLogin(login.workspaceId, login.kind);
}

export function registerLogin(login: Omit<PendingLogin, 'timer'>): PendingLogin {
  endLogin(login.workspaceId, login.kind);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', endAllLogins);
  }
  const timer = setTimeout(() => endLogin(login.workspaceId, login.kind), login.expiresAt.getTime() - Date.now());
  timer.unref();
  const entry = { ...login, timer };
  pending.set(keyOf(login.workspaceId, login.kind), entry);
  void login.exited.then(() => {
    if (pending.get(keyOf(login.workspaceId, login.kind)) === entry) {
      clearTimeout(timer);
      pending.delete(keyOf(login.workspaceId, login.kind));
    }
  });
  return entry;
}

/** Kills and forgets the workspace's pending login of `kind`, if any. */
export function endLogin(workspaceId: string, kind: LocalAiCliKind): void {
  const login = pending.get(keyOf(workspaceId, kind));
  if (!login) return;
  pending.delete(keyOf(workspaceId, kind));
  clearTimeout(login.timer);
  killCli(login.child);
}
