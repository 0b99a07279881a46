/**
 * What the service asks each local AI CLI, as argument arrays. These are the only commands
 * run; the README ("Local AI CLI sessions") documents them for operators and for the fake
 * executables of the tests.
 */
import type { LocalAiCliKind } from '../../../db/entities';

export interface CliProtocol {
  /** Prints the version on its first line of stdout; exit 0. */
  version: string[];
  /** Exit 0 when signed in (the session token, when any, comes in `tokenEnv`); any other exit: not signed in. */
  authStatus: string[];
  /**
   * Starts a browser login: prints the authorization URL (a line holding an http(s) URL whose
   * `redirect_uri` is the CLI's loopback callback and whose `state` the callback must carry),
   * then waits for the callback and exits 0 once the login is stored in its configuration directory.
   */
  login: string[];
  /** Prints the models as JSON: an array of ids or of `{ id, name? }`; exit 0. */
  models: string[];
  /** The variable a pasted token is given in; null: the CLI takes no token (login only). */
  tokenEnv: string | null;
  /** Arguments of a one-shot prompt, for agent runs that use the CLI as their model provider. */
  prompt(prompt: string, model?: string): string[];
  /** The answer text in the output of a one-shot prompt; throws when the output has none. */
  answerOf(stdout: string): string;
}

/** cliA prints one JSON object, `{ type: "result", result, is_error }`. */
function cliAAnswer(stdout: string): string {
  const parsed = JSON.parse(stdout.trim()) as { result?: unknown; is_error?: boolean };
  if (parsed.is_error || typeof parsed.result !== 'string') throw new Error('cliA answered without a result.');
  return parsed.result;
}

/** cliB prints JSON lines; the answer is the text of the last completed agent message. */
function cliBAnswer(stdout: string): string {
  let answer: string | null = null;
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    const event = JSON.parse(line) as { type?: string; item?: { type?: string; text?: unknown } };
    if (event.type === 'item.completed' && event.item?.type === 'agent_message' && typeof event.item.text === 'string')
      answer = event.item.text;
  }
  if (answer === null) throw new Error('cliB answered without an agent message.');
  return answer;
}

export const CLI_PROTOCOLS: Record<LocalAiCliKind, CliProtocol> = {
  cliA: {
    version: ['--version'],
    authStatus: ['auth', 'status', '--json'],
    login: ['auth', 'login'],
    models: ['models', '--json'],
    tokenEnv: 'CLI_A_OAUTH_TOKEN',
    prompt: (prompt, model) => ['-p', prompt, '--output-format', 'json', ...(model ? ['--model', model] : [])],
    answerOf: cliAAnswer,
  },
  cliB: {
    version: ['--version'],
    authStatus: ['login', 'status'],
    login: ['login'],
    models: ['models', '--json'],
    tokenEnv: null,
    prompt: (prompt, model) => ['exec', '--json', ...(model ? ['--model', model] : []), prompt],
    answerOf: cliBAnswer,
  },
};
