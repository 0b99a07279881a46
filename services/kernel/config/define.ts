import { z } from 'zod';

/**
 * What every configuration area module of this folder is made of: one zod schema of the
 * environment variables it owns (each with its `.describe()` text, its default and, for a
 * secret, `.meta(SECRET)`), and a function that turns the parsed variables into its slice of
 * `AppConfig`. index.ts composes the areas; docs/configuration.md and .env.example are rendered
 * from the same schemas, one heading per area (`npm run docs:config`).
 */
export interface ConfigArea<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The module that owns the area, relative to the repository root (shown in the docs). */
  source: string;
  /** Heading of the area in docs/configuration.md and .env.example. */
  title: string;
  schema: z.ZodObject<S>;
}

/** An area owned by `services/kernel/config/<module>.ts`. */
export function defineArea<S extends z.ZodRawShape>(module: string, title: string, shape: S): ConfigArea<S> {
  return { source: `services/kernel/config/${module}.ts`, title, schema: z.object(shape) };
}

/** Metadata of a variable whose value is a secret: .env.example shows a placeholder, never a value. */
export const SECRET = { secret: true } as const;

export const isSecret = (schema: z.ZodType): boolean => z.globalRegistry.get(schema)?.secret === true;

export const envBool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** A comma-separated list, entries trimmed, empty ones dropped. */
export const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

/** The one shape of a configuration error: names the variable(s) at fault. */
export const invalidConfiguration = (message: string) => new Error(`Invalid configuration: ${message}`);

/** Parses `env` with a schema; a failure lists every offending variable with its message. */
export function parseEnv<S extends z.ZodRawShape>(schema: z.ZodObject<S>, env: NodeJS.ProcessEnv): z.output<z.ZodObject<S>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw invalidConfiguration(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return parsed.data;
}
