/**
 * The authorization matrix's renderings: docs/authorization.md is what the routes declare
 * (regenerate with `npm run docs:authz`), every OpenAPI operation carries its requirement, and
 * a route without a complete declaration stops app creation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allRoutes, createApp } from '../../../api/app';
import { renderAuthorizationDoc } from '../../../api/http/authorization';
import { buildOpenApiDocument } from '../../../api/openapi';
import { assertRoutesDeclared, type AnyRoute } from '../../../api/http/route';

test('docs/authorization.md is up to date with the routes (npm run docs:authz)', () => {
  const committed = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'authorization.md'), 'utf8');
  expect(committed).toBe(renderAuthorizationDoc(allRoutes));
});

test('every OpenAPI operation carries x-required-role, x-key-scopes and x-credential', () => {
  const doc = buildOpenApiDocument(allRoutes, { version: 'test' }) as unknown as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  let operations = 0;
  for (const route of allRoutes) {
    const op = doc.paths[route.path][route.method];
    operations++;
    expect(op).toEqual(
      expect.objectContaining({
        'x-required-role': expect.any(String),
        'x-key-scopes': expect.any(Array),
        'x-credential': expect.any(String),
      }),
    );
    if (route.access.kind !== 'public' && route.access.kind !== 'operator') expect(op['x-required-role']).toBe(route.access.roles);
  }
  expect(operations).toBe(allRoutes.length);
  expect(doc.paths['/api/workers/extflow/import-bundle'].post['x-required-role']).toBe('write');
  expect(doc.paths['/api/mailer/inbound'].post['x-required-role']).toBe('write');
});

describe('a route without a complete access declaration is not mounted', () => {
  const base = allRoutes.find((r) => r.operationId === 'listWorkflows')!;
  test.each<[string, unknown]>([
    ['no access', undefined],
    ['unknown kind', { kind: 'anyone' }],
    ['key route without roles', { kind: 'apiKey', scopes: 'workspace' }],
    ['session route without roles', { kind: 'session' }],
    ['key-or-session route with an unknown role', { kind: 'apiKeyOrSession', roles: 'everyone' }],
    ['key route without scopes', { kind: 'apiKey', roles: 'read' }],
  ])('%s: throws', (_name, access) => {
    const route = { ...base, path: '/api/v1/probe', access } as AnyRoute;
    expect(() => assertRoutesDeclared([route])).toThrow(/GET \/api\/v1\/probe/);
    // App creation runs the same check before mounting anything.
    expect(() => createApp({ config: { trustProxy: false, bodyLimit: '1mb' } } as never, [route])).toThrow(/GET \/api\/v1\/probe/);
  });

  test('the service routes all pass', () => {
    expect(() => assertRoutesDeclared(allRoutes)).not.toThrow();
  });
});
