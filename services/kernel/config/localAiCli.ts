import { z } from 'zod';
import path from 'node:path';
import { defineArea } from './define';
import type { ProcessesEnv } from './processes';

/** Local AI command-line tools run per workspace (services/workers/localAiCli). */
export const localAiCliArea = defineArea('localAiCli', 'Local AI CLIs', {
  LOCAL_AI_CLI_A_PATH: z
    .string()
    .optional()
    .describe(
      'Path of the `cliA` executable (relative paths resolve against the working directory; a bare name is looked up on `PATH`); unset: `cliA` sessions answer `not_configured`.',
    ),
  LOCAL_AI_CLI_B_PATH: z
    .string()
    .optional()
    .describe('Path of the `cliB` executable (as for cliA); unset: `cliB` sessions answer `not_configured`.'),
  LOCAL_AI_CLI_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(15_000)
    .describe(
      "Budget of one local AI CLI invocation (and of a login's wait for its authorization URL and for its end after the callback); over it the CLI's process group is killed.",
    ),
});

export type LocalAiCliEnv = z.output<typeof localAiCliArea.schema>;

export interface LocalAiCliConfig {
  /** Absolute paths of the executables (LOCAL_AI_CLI_A_PATH, LOCAL_AI_CLI_B_PATH); unset: that CLI is not configured. */
  paths: { cliA: string | undefined; cliB: string | undefined };
  /** Budget of one CLI invocation (and of a login's wait for its authorization URL). */
  timeoutMs: number;
  /** Parent of the per-workspace CLI configuration directories (`<DATA_DIR>/local-ai-cli`). */
  rootDir: string;
}

export function localAiCliConfig(e: LocalAiCliEnv & Pick<ProcessesEnv, 'DATA_DIR'>): { localAiCli: LocalAiCliConfig } {
  return {
    localAiCli: {
      paths: { cliA: executablePath(e.LOCAL_AI_CLI_A_PATH), cliB: executablePath(e.LOCAL_AI_CLI_B_PATH) },
      timeoutMs: e.LOCAL_AI_CLI_TIMEOUT_MS,
      rootDir: path.resolve(e.DATA_DIR, 'local-ai-cli'),
    },
  };
}

/** A configured executable: a path with a slash resolves against the working directory (CLIs run elsewhere); a bare name is looked up on PATH. */
function executablePath(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  return trimmed.includes('/') ? path.resolve(trimmed) : trimmed;
}
