/**
 * A connected local AI CLI as the model provider of agent runs (command jobs and research with
 * `aiProvider: "cliA"` or `"cliB"`): whether the workspace's session is connected, and how to
 * run the CLI for it. The token stays inside: `invoke` adds it to the process environment, so
 * callers never hold it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, LocalAiCliSessionSchema, type LocalAiCliKind } from '../../../db/entities';
import { openCredential, requireKeyring } from '../../credentials';
import { CLI_PROTOCOLS } from './protocol';
import { runCli, type CliRunResult } from './runner';
import { configDirOf, type LocalAiCliDeps } from './sessions';
import type { LocalAiCliConfig } from '../../kernel/config';
import type { CredentialKeySettings } from '../../credentials';
import { NO_USAGE, type ChatMessage, type ChatResult } from '../../models/chat';

export interface LocalAiCliProvider {
  kind: LocalAiCliKind;
  /** The session's last verification found it signed in (and the CLI is still configured). */
  connected: boolean;
  /** Why it cannot be used, when not connected. */
  reason: string | null;
  /** Arguments of a one-shot prompt for this CLI (pass them to `invoke`). */
  promptArgs(prompt: string, model?: string): string[];
  /**
   * Runs the CLI for the workspace: its own configuration directory, the scrubbed environment,
   * the session token, the configured time budget (or `timeoutMs`). Refuses when not connected.
   */
  invoke(args: string[], opts?: { timeoutMs?: number }): Promise<CliRunResult>;
  /** Sends one prompt and returns the CLI's answer text; throws with the reason when it gives none. */
  ask(prompt: string, model?: string): Promise<string>;
}

/** The workspace's CLI of `kind` as a model provider. Reads the stored session; runs nothing until `invoke`. */
export async function localAiCliProvider(
  em: EntityManager,
  deps: LocalAiCliDeps,
  workspaceId: string,
  kind: LocalAiCliKind,
): Promise<LocalAiCliProvider> {
  const executable = deps.config.paths[kind];
  const row = await em.findOne(LocalAiCliSessionSchema, { workspaceId, kind });
  const connected = Boolean(executable) && row?.status === 'connected';
  const reason = !executable
    ? `${kind} is not configured on this server.`
    : connected
      ? null
      : `${kind} is not connected for this workspace; verify or sign in first.`;
  let token: string | null = null;
  if (connected && row?.credentialId) {
    const credential = await em.findOne(CredentialSchema, { id: row.credentialId, workspaceId });
    const value = credential ? openCredential(requireKeyring(deps.keys), credential) : null;
    token = typeof value?.token === 'string' ? value.token : null;
  }
  const tokenEnv = CLI_PROTOCOLS[kind].tokenEnv;
  const invoke = async (args: string[], opts: { timeoutMs?: number } = {}): Promise<CliRunResult> => {
    if (!connected || !executable) throw new Error(reason ?? `${kind} is not connected.`);
    return runCli({
      executable,
      args,
      configDir: configDirOf(deps.config, workspaceId, kind),
      extraEnv: tokenEnv && token ? { [tokenEnv]: token } : {},
      timeoutMs: opts.timeoutMs ?? deps.config.timeoutMs,
    });
  };
  return {
    kind,
    connected,
    reason,
    promptArgs: CLI_PROTOCOLS[kind].prompt,
    invoke,
    async ask(prompt, model) {
      const result = await invoke(CLI_PROTOCOLS[kind].prompt(prompt, model));
      if (result.kind === 'timeout') throw new Error(`${kind} did not answer within ${deps.config.timeoutMs} ms.`);
      if (result.kind === 'notStarted') throw new Error(`${kind} could not be started.`);
      if (result.code !== 0) throw new Error(`${kind} exited with code ${result.code}: ${result.stderr.trim().slice(0, 300)}`);
      try {
        return CLI_PROTOCOLS[kind].answerOf(result.stdout);
      } catch (err) {
        throw new Error(`${kind} gave no answer: ${(err as Error).message}`);
      }
    },
  };
}

/** A conversation as one prompt for a CLI, which takes text rather than messages and tools. */
export function cliPromptOf(messages: ChatMessage[]): string {
  return messages
    .map(
      (m) =>
        `${m.role.toUpperCase()}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? (m as { tool_calls?: unknown }).tool_calls ?? '')}`,
    )
    .join('\n\n');
}

/** The CLI cannot answer for the workspace (not configured on this worker, or not connected): retrying does not help. */
export class LocalAiCliUnavailable extends Error {}

/**
 * A conversation sent to the workspace's connected CLI as one prompt, answered as a chat result: no tool calls, and 0 tokens
 * and 0 credits (the CLI account pays). Throws `LocalAiCliUnavailable` with the reason when the
 * CLI cannot be used.
 */
export async function askLocalAiCli(
  em: EntityManager,
  deps: { config: LocalAiCliConfig | undefined; keys: CredentialKeySettings },
  workspaceId: string,
  kind: LocalAiCliKind,
  messages: ChatMessage[],
  model?: string | null,
): Promise<ChatResult> {
  if (!deps.config) throw new LocalAiCliUnavailable('This worker has no local AI CLI configuration.');
  const provider = await localAiCliProvider(em, { config: deps.config, keys: deps.keys }, workspaceId, kind);
  if (!provider.connected) throw new LocalAiCliUnavailable(provider.reason ?? `${kind} is not connected for this workspace.`);
  const content = await provider.ask(cliPromptOf(messages), model ?? undefined);
  return { content, toolCalls: [], finishReason: 'stop', model: model ?? kind, usage: NO_USAGE, costCredits: 0 };
}
