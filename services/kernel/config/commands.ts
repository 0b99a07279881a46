import { z } from 'zod';
import { defineArea } from './define';

/** Command jobs (services/commands/): the confirmation window, and how long a confirm request waits. */
export const commandsArea = defineArea('commands', 'Commands', {
  COMMAND_CONFIRMATION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(300)
    .describe(
      "How long a command job's `cnf_` confirmation stays valid (1 to 86400); the spec's 300 s, shorter in tests. The worker reads it (it issues the confirmation); set the same value for the API and workers.",
    ),
  COMMAND_CONFIRM_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(30_000)
    .describe('How long a confirm request waits for the confirmed plan to finish before answering with the job still `running`.'),
});

export type CommandsEnv = z.output<typeof commandsArea.schema>;

export interface CommandsConfig {
  /** Command jobs: confirmation window, and how long a confirm request waits for the confirmed plan to finish. */
  commands: { confirmationTtlSeconds: number; confirmWaitMs: number };
}

export function commandsConfig(e: CommandsEnv): CommandsConfig {
  return { commands: { confirmationTtlSeconds: e.COMMAND_CONFIRMATION_TTL_SECONDS, confirmWaitMs: e.COMMAND_CONFIRM_WAIT_MS } };
}
