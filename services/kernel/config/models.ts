import { z } from 'zod';
import { defineArea, invalidConfiguration, SECRET } from './define';

/** The deployment's chat model (services/models/), used by agents, research and commands, and its prices. */
export const modelsArea = defineArea('models', 'Models', {
  LLM_BASE_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "The deployment's OpenAI-compatible chat model endpoint (e.g. `https://api.openai.com/v1`); a workspace's own `llm` credential replaces it for that workspace (the most recently updated one when it has several); unset and no credential: agent features answer 503; the worker status probes `GET <base>/models` (2 s, through the outbound guard).",
    ),
  LLM_API_KEY: z.string().optional().meta(SECRET).describe('Its bearer key (local servers often need none).'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini').describe('The model asked for.'),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000).describe('Timeout of one chat model request.'),
  LLM_MAX_RETRIES: z.coerce
    .number()
    .int()
    .min(0)
    .max(10)
    .default(3)
    .describe('Retries of 408, 409, 429 and 5xx answers and connection errors, with backoff, honouring Retry-After.'),
  LLM_PRICES: z
    .string()
    .optional()
    .describe(
      'Credits per 1,000 input and output tokens by model name (`*` for the rest); `costCredits` of research runs and command jobs comes from it. Unset: `{"*":{"input":1,"output":2}}`.',
    ),
});

export type ModelsEnv = z.output<typeof modelsArea.schema>;

export interface LlmConfig {
  /** Unset: no deployment model; agent features need a workspace `llm` credential. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  /** Credits per 1,000 tokens by model name; `*` applies to models not listed. */
  prices: PriceTable;
}

export type PriceTable = Record<string, { input: number; output: number }>;

export interface ModelsConfig {
  /** The deployment's chat model (OpenAI-compatible); a workspace `llm` credential can replace it. */
  llm: LlmConfig;
}

export function modelsConfig(e: ModelsEnv): ModelsConfig {
  return {
    llm: {
      baseUrl: e.LLM_BASE_URL || undefined,
      apiKey: e.LLM_API_KEY || undefined,
      model: e.LLM_MODEL,
      timeoutMs: e.LLM_TIMEOUT_MS,
      maxRetries: e.LLM_MAX_RETRIES,
      prices: parsePriceTable(e.LLM_PRICES),
    },
  };
}

const priceTableSchema = z.record(z.string().min(1), z.strictObject({ input: z.number().min(0), output: z.number().min(0) }));

/** Default prices, in credits per 1,000 tokens, for models the table does not name. */
const DEFAULT_PRICES: PriceTable = { '*': { input: 1, output: 2 } };

/** LLM_PRICES: JSON `{ "<model>": { "input": n, "output": n } }` in credits per 1,000 tokens; `*` for the rest. */
function parsePriceTable(raw: string | undefined): PriceTable {
  if (!raw) return DEFAULT_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidConfiguration('LLM_PRICES: expected JSON such as {"gpt-4o-mini":{"input":0.15,"output":0.6},"*":{"input":1,"output":2}}');
  }
  const result = priceTableSchema.safeParse(parsed);
  if (!result.success)
    throw invalidConfiguration(
      `LLM_PRICES: ${result.error.issues[0]?.message ?? 'invalid'} (each model maps to { input, output } credits per 1,000 tokens)`,
    );
  return { ...DEFAULT_PRICES, ...result.data };
}
