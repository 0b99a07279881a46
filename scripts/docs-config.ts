/**
 * Writes docs/configuration.md and .env.example from the configuration's zod schemas
 * (services/config.ts): every variable, grouped by area, with its `.describe()` text and its
 * default (`npm run docs:config`). `--check` exits 1 when a committed file is stale instead of
 * writing it; test/unit/configDocs.test.ts fails in the same case.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { envSchema } from '../services/kernel/config';

const ROOT = join(__dirname, '..');
export const CONFIG_DOC = join(ROOT, 'docs', 'configuration.md');
export const ENV_EXAMPLE = join(ROOT, '.env.example');

/**
 * Variables read by the tooling (Temporal CLI provisioning, the test setup), not by the service's
 * configuration; listed so the reference is complete.
 */
const toolingEnv = z.object({
  TEMPORAL_CLI_PATH: z.string().optional().describe('Use this `temporal` binary instead of looking on `PATH` or building one (scripts/temporal-cli.ts).'),
  TEMPORAL_CLI_CACHE: z.string().optional().describe('Where the pinned Temporal CLI is built and cached. Unset: `~/.cache/svc-temporal`.'),
  TEST_DATABASE_URL: z.string().optional().describe('Tests: server to create the throwaway database on. Unset: the local server, else an embedded one.'),
});

/**
 * Areas by variable-name prefix, in the order they are rendered; the longest matching prefix
 * wins, and a full name is a prefix too. A variable no prefix matches fails the render, so a
 * new setting is filed somewhere on purpose.
 */
const AREAS: Array<[area: string, prefixes: string[]]> = [
  ['HTTP server', ['PORT', 'HOST', 'BODY_LIMIT', 'TRUST_PROXY', 'SHUTDOWN_TIMEOUT_MS', 'LOG_LEVEL', 'VALIDATE_RESPONSES', 'METRICS_']],
  ['Processes', ['API_', 'WORKERS', 'WORKER_HEAP_MB', 'WORKER_HEARTBEAT_', 'DATA_DIR']],
  ['PostgreSQL', ['DATABASE_URL', 'DATABASE_ADMIN_URL']],
  ['Temporal', ['TEMPORAL_', 'WORKER_MAX_CACHED_WORKFLOWS', 'WORKFLOW_BUNDLE_PATH']],
  ['Secrets and operators', ['SECRET_KEY', 'OPERATOR_']],
  ['Accounts and sign-in', ['SIGN_IN_', 'SESSION_', 'BOOTSTRAP_', 'END_USERS_']],
  ['Runs, webhooks and the outbox', ['RUN_', 'OUTBOX_', 'WEBHOOK_', 'APPROVAL_', 'ERRTRACKER_', 'OUTBOUND_']],
  ['Workflow sources', ['WORKFLOW_REPOSITORY_ROOT', 'EXTFLOW_']],
  ['Files and blobs', ['BLOB_', 'FILES_', 'CLAMD_']],
  ['Credentials', ['CREDENTIAL']],
  ['Databases and configuration packages', ['DATABASE_QUERY_', 'CONFIGURATION_']],
  ['Models and commands', ['LLM_', 'COMMAND_']],
  ['Knowledge', ['EMBEDDINGS_', 'KNOWLEDGE_']],
  ['Local AI CLIs', ['LOCAL_AI_CLI_']],
  ['Mailer', ['GMAIL_', 'GRAPH_', 'GOOGLE_', 'MAILER_']],
  ['Sandbox host', ['SANDBOX_']],
  ['Tooling (not read by the service)', ['TEMPORAL_CLI_', 'TEST_']],
];

/** Variables whose value is a secret: .env.example shows a placeholder, never a value. */
const SECRET = /(_KEY|_KEYS|_TOKEN|_SECRET_ACCESS_KEY)$/;

export interface Setting {
  name: string;
  area: string;
  description: string;
  /** The default as it would be written in the environment; undefined when the variable is unset by default. */
  defaultValue: string | undefined;
}

function areaOf(name: string): string {
  let best: { area: string; length: number } | undefined;
  for (const [area, prefixes] of AREAS) {
    for (const prefix of prefixes) {
      if (name.startsWith(prefix) && prefix.length > (best?.length ?? 0)) best = { area, length: prefix.length };
    }
  }
  if (!best) throw new Error(`${name} belongs to no area: add its prefix to AREAS in scripts/docs-config.ts`);
  return best.area;
}

/** The `.default()` inside a variable's schema (through optional, preprocess and transform pipes). */
function defaultOf(schema: z.ZodType): string | undefined {
  const def = schema._zod.def as { type: string; defaultValue?: unknown; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType };
  if (def.type === 'default') return String(def.defaultValue);
  if ((def.type === 'optional' || def.type === 'nullable') && def.innerType) return defaultOf(def.innerType);
  if (def.type === 'pipe') return (def.in && defaultOf(def.in)) ?? (def.out && defaultOf(def.out));
  return undefined;
}

/** Every setting of the service and its tooling, grouped by area in AREAS' order. */
export function configSettings(): Setting[] {
  const shape: Record<string, z.ZodType> = { ...envSchema.shape, ...toolingEnv.shape };
  const settings = Object.entries(shape).map(([name, schema]) => {
    if (!schema.description) throw new Error(`${name} has no .describe() text in services/config.ts`);
    return { name, area: areaOf(name), description: schema.description, defaultValue: defaultOf(schema) };
  });
  const order = AREAS.map(([area]) => area);
  return settings.sort((a, b) => order.indexOf(a.area) - order.indexOf(b.area));
}

const byArea = (settings: Setting[]) => AREAS.map(([area]) => [area, settings.filter((s) => s.area === area)] as const).filter(([, list]) => list.length > 0);

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** docs/configuration.md: one table per area. */
export function renderConfigDoc(settings = configSettings()): string {
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs:config` from the zod schemas of services/config.ts: edit those, not this file. -->',
    '',
    'Every setting is an environment variable; none is needed for `npm start` on one machine.',
    '[.env.example](../.env.example) lists the same variables, commented out. An invalid value stops',
    'the process at start with a message naming the variable. Operating the service:',
    '[operations.md](operations.md).',
  ];
  for (const [area, list] of byArea(settings)) {
    lines.push('', `## ${area}`, '', '| Variable | Default | Meaning |', '|---|---|---|');
    for (const s of list) lines.push(`| \`${s.name}\` | ${s.defaultValue === undefined ? 'unset' : `\`${cell(s.defaultValue)}\``} | ${cell(s.description)} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Wraps a comment at 100 columns, `# ` first on each line. */
function commentLines(text: string): string[] {
  const out: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/)) {
    if (line.length + 1 + word.length > 100 && line !== '#') {
      out.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  out.push(line);
  return out;
}

/** .env.example: every variable commented out, with its default (or a placeholder for secrets). */
export function renderEnvExample(settings = configSettings()): string {
  const lines = [
    '# Settings of svc-workflows, generated by `npm run docs:config` from services/config.ts.',
    '# Every line is commented out: the value shown is the default, or empty when the variable is',
    '# unset by default. Secrets show a placeholder, never a value. Reference: docs/configuration.md.',
  ];
  for (const [area, list] of byArea(settings)) {
    lines.push('', `# ---- ${area} ----`);
    for (const s of list) {
      const value = SECRET.test(s.name) && s.defaultValue === undefined ? '<secret>' : (s.defaultValue ?? '');
      lines.push('', ...commentLines(s.description), `# ${s.name}=${/[\s"'#$`\\]/.test(value) ? `'${value}'` : value}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const outputs: Array<[string, string]> = [
    [CONFIG_DOC, renderConfigDoc()],
    [ENV_EXAMPLE, renderEnvExample()],
  ];
  if (process.argv.includes('--check')) {
    let stale = false;
    for (const [file, text] of outputs) {
      if ((await readFile(file, 'utf8').catch(() => '')) !== text) {
        process.stderr.write(`${file.slice(ROOT.length + 1)} is stale: run npm run docs:config\n`);
        stale = true;
      }
    }
    if (stale) process.exit(1);
    return;
  }
  for (const [file, text] of outputs) await writeFile(file, text);
}

if (require.main === module) void main();
