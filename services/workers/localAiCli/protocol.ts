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
}

export const CLI_PROTOCOLS: Record<LocalAiCliKind, CliProtocol> = {
  cliA: {
    version: ['--version'],
    authStatus: ['auth', 'status', '--json'],
    login: ['auth', 'login'],
    models: ['models', '--json'],
    tokenEnv: 'CLI_A_OAUTH_TOKEN',
    prompt: (prompt, model) => ['-p', prompt, '--output-format', 'json', ...(model ? ['--model', model] : [])],
  },
  cliB: {
    version: ['--version'],
    authStatus: ['login', 'status'],
    login: ['login'],
    models: ['models', '--json'],
    tokenEnv: null,
    prompt: (prompt, model) => ['exec', '--json', ...(model ? ['--model', model] : []), prompt],
  },
};
