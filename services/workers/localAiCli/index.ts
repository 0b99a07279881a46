/** Local AI CLI sessions (sessions.ts), their runner (runner.ts), protocol (protocol.ts), pending logins (logins.ts) and the model-provider seam for agent runs (provider.ts). */
export {
  completeLocalAiCliLogin,
  configDirOf,
  listLocalAiCliModels,
  type LocalAiCliDeps,
  type LocalAiCliModel,
  type LocalAiCliReadiness,
  localAiCliSession,
  type ReadinessStatus,
  type SessionAction,
  startLocalAiCliLogin,
  storedLocalAiCliState,
  storeLocalAiCliToken,
} from './sessions';
export { askLocalAiCli, cliPromptOf, localAiCliProvider, type LocalAiCliProvider, LocalAiCliUnavailable } from './provider';
export { CLI_PROTOCOLS } from './protocol';
export { CLI_ENV_ALLOW_LIST, type CliRunResult } from './runner';
