import { z } from 'zod';
import { defineArea, list, SECRET } from './define';

/** Operators' access to the Temporal codec endpoint (services/accounts/operators.ts). */
export const operatorsArea = defineArea('operators', 'Operators', {
  OPERATOR_TOKEN: z
    .string()
    .min(32, 'OPERATOR_TOKEN must be at least 32 characters')
    .optional()
    .meta(SECRET)
    .describe('32+ characters; bearer token operators send to the Temporal codec endpoint (`--codec-auth "Bearer …"` in the CLI).'),
  OPERATOR_EMAILS: z
    .string()
    .optional()
    .describe(
      'Comma-separated emails of users whose session may use the codec endpoint (the Web UI, with "include cross-origin credentials").',
    ),
});

export type OperatorsEnv = z.output<typeof operatorsArea.schema>;

export interface OperatorsConfig {
  /** Operators' access to the Temporal codec endpoint: this bearer token, or a session of one of `operatorEmails`. */
  operatorToken: string | undefined;
  operatorEmails: string[];
}

export function operatorsConfig(e: OperatorsEnv): OperatorsConfig {
  return { operatorToken: e.OPERATOR_TOKEN || undefined, operatorEmails: list(e.OPERATOR_EMAILS).map((email) => email.toLowerCase()) };
}
