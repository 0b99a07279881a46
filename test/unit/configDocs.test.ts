/**
 * docs/configuration.md and .env.example are what the configuration's zod schemas declare
 * (regenerate both with `npm run docs:config`).
 */
import { readFileSync } from 'node:fs';
import { CONFIG_DOC, configSettings, ENV_EXAMPLE, renderConfigDoc, renderEnvExample } from '../../scripts/docs-config';
import { envSchema, loadConfig } from '../../services/kernel/config';

test('docs/configuration.md is up to date with services/config.ts (npm run docs:config)', () => {
  expect(readFileSync(CONFIG_DOC, 'utf8')).toBe(renderConfigDoc());
});

test('.env.example is up to date with services/config.ts (npm run docs:config)', () => {
  expect(readFileSync(ENV_EXAMPLE, 'utf8')).toBe(renderEnvExample());
});

test('every variable the service parses is documented once, with its default', () => {
  const settings = configSettings();
  const names = settings.map((s) => s.name);
  expect(new Set(names).size).toBe(names.length);
  for (const name of Object.keys(envSchema.shape)) expect(names).toContain(name);
  const byName = new Map(settings.map((s) => [s.name, s]));
  expect(byName.get('PORT')).toMatchObject({ area: 'HTTP server', defaultValue: '3000' });
  expect(byName.get('TRUST_PROXY')).toMatchObject({ defaultValue: 'false' });
  expect(byName.get('SECRET_KEY')).toMatchObject({ defaultValue: undefined });
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
