/** The local AI CLI process environment and configured paths (no process is started here). */
import path from 'node:path';
import { loadConfig } from '../../../../services/kernel/config';
import { CLI_ENV_ALLOW_LIST, cliEnvironment } from '../../../../services/workers/localAiCli/runner';

test('a CLI sees only the allow-list, its own HOME and the session variables', () => {
  const source = {
    PATH: '/usr/bin',
    LANG: 'C.UTF-8',
    DATABASE_URL: 'postgres://x',
    SECRET_KEY: 's'.repeat(40),
    HOME: '/root',
    LLM_API_KEY: 'k',
    TZ: 'UTC',
  };
  const env = cliEnvironment('/data/local-ai-cli/ws_1/cliA', { CLI_A_OAUTH_TOKEN: 't' }, source);
  expect(env).toEqual({
    PATH: '/usr/bin',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    HOME: '/data/local-ai-cli/ws_1/cliA',
    XDG_CONFIG_HOME: '/data/local-ai-cli/ws_1/cliA/.config',
    CLI_A_OAUTH_TOKEN: 't',
  });
  expect(CLI_ENV_ALLOW_LIST).not.toContain('HOME');
});

test('configured CLI paths: a path resolves against the working directory, a bare name stays for PATH lookup', () => {
  const config = loadConfig({ LOCAL_AI_CLI_A_PATH: 'bin/cli-a', LOCAL_AI_CLI_B_PATH: 'cli-b', DATA_DIR: '/srv/data' });
  expect(config.localAiCli.paths).toEqual({ cliA: path.resolve('bin/cli-a'), cliB: 'cli-b' });
  expect(config.localAiCli.rootDir).toBe('/srv/data/local-ai-cli');
  expect(config.localAiCli.timeoutMs).toBe(15_000);
  expect(loadConfig({}).localAiCli.paths).toEqual({ cliA: undefined, cliB: undefined });
});
