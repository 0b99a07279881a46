/** Local AI CLI sessions (sessions.ts), their runner (runner.ts), protocol (protocol.ts), pending logins (logins.ts) and the model-provider seam for agent runs (provider.ts). */
export * from './sessions';
export * from './provider';
export { CLI_PROTOCOLS } from './protocol';
export { CLI_ENV_ALLOW_LIST, type CliRunResult } from './runner';
