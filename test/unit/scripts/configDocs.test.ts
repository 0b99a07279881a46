/**
 * docs/configuration.md and .env.example are what the configuration areas' zod schemas declare
 * (services/kernel/config/<area>.ts; regenerate both with `npm run docs:config`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_DOC, configSettings, DOC_AREAS, ENV_EXAMPLE, renderConfigDoc, renderEnvExample } from '../../../scripts/docsConfig';
import { CONFIG_AREAS, envSchema, loadConfig } from '../../../services/kernel/config';

const ROOT = join(__dirname, '..', '..', '..');

test('docs/configuration.md is up to date with the areas of services/kernel/config (npm run docs:config)', () => {
  expect(readFileSync(CONFIG_DOC, 'utf8')).toBe(renderConfigDoc());
});

test('.env.example is up to date with the areas of services/kernel/config (npm run docs:config)', () => {
  expect(readFileSync(ENV_EXAMPLE, 'utf8')).toBe(renderEnvExample());
});

test('each area is one heading of both files, in the order of CONFIG_AREAS, naming the module that declares it', () => {
  const doc = readFileSync(CONFIG_DOC, 'utf8');
  const env = readFileSync(ENV_EXAMPLE, 'utf8');
  expect([...doc.matchAll(/^## (.+)$/gm)].map((m) => m[1])).toEqual(DOC_AREAS.map((a) => a.title));
  expect([...env.matchAll(/^# ---- (.+) \((.+)\) ----$/gm)].map((m) => [m[1], m[2]])).toEqual(DOC_AREAS.map((a) => [a.title, a.source]));
  for (const area of DOC_AREAS) {
    expect(existsSync(join(ROOT, area.source))).toBe(true);
    expect(Object.keys(area.schema.shape).length).toBeGreaterThan(0);
  }
  expect(new Set(DOC_AREAS.map((a) => a.title)).size).toBe(DOC_AREAS.length);
});

test('every variable the service parses belongs to exactly one area and is documented once, with its default', () => {
  const declared = CONFIG_AREAS.flatMap((a) => Object.keys(a.schema.shape));
  expect(new Set(declared).size).toBe(declared.length);
  expect([...declared].sort()).toEqual(Object.keys(envSchema.shape).sort());
  const settings = configSettings();
  const names = settings.map((s) => s.name);
  expect(new Set(names).size).toBe(names.length);
  for (const name of Object.keys(envSchema.shape)) expect(names).toContain(name);
  const byName = new Map(settings.map((s) => [s.name, s]));
  expect(byName.get('PORT')).toMatchObject({ area: 'HTTP server', defaultValue: '3000' });
  expect(byName.get('METRICS_TOKEN')).toMatchObject({ area: 'Metrics', secret: true });
  expect(byName.get('TRUST_PROXY')).toMatchObject({ defaultValue: 'false' });
  expect(byName.get('SECRET_KEY')).toMatchObject({ defaultValue: undefined, secret: true });
});

test('a variable named like a key, token or secret is flagged secret, and .env.example never shows its value', () => {
  const looksSecret = /(_KEY|_KEYS|_TOKEN|_SECRET_ACCESS_KEY)$/;
  const env = readFileSync(ENV_EXAMPLE, 'utf8');
  for (const s of configSettings()) {
    if (looksSecret.test(s.name)) expect({ name: s.name, secret: s.secret }).toEqual({ name: s.name, secret: true });
    if (s.secret) expect(env).toContain(`# ${s.name}=<secret>\n`);
  }
  expect(configSettings().filter((s) => s.secret).length).toBeGreaterThanOrEqual(11);
});

test('the defaults .env.example shows are the ones loadConfig applies', () => {
  // Uncommenting every line that has a value must change nothing.
  const env: Record<string, string> = {};
  for (const line of readFileSync(ENV_EXAMPLE, 'utf8').split('\n')) {
    const m = /^# ([A-Z][A-Z0-9_]+)=(.+)$/.exec(line);
    if (m && m[1] in envSchema.shape && m[2] !== '<secret>') env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  expect(Object.keys(env).length).toBeGreaterThan(50);
  expect(loadConfig(env)).toEqual(loadConfig({}));
});
