import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { AnyRoute } from './http/route';
import { openApiExtensions } from './http/authorization';

/**
 * Builds the OpenAPI 3.1 document from the same route definitions (and zod schemas) the
 * router validates with, so the document cannot drift from what the server accepts.
 */
export function buildOpenApiDocument(routes: AnyRoute[], opts: { version: string }) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'Workspace API key: `hise_` followed by 32 base64url characters',
  });
  registry.registerComponent('securitySchemes', 'sessionCookie', { type: 'apiKey', in: 'cookie', name: 'svc_session' });

  for (const route of routes) {
    const security: Array<Record<string, string[]>> =
      route.access.kind === 'apiKey'
        ? [{ bearerAuth: [] }]
        : route.access.kind === 'session'
          ? [{ sessionCookie: [] }]
          : route.access.kind === 'operator'
            ? [{ bearerAuth: [] }, { sessionCookie: [] }]
            : [];
    registry.registerPath({
      method: route.method,
      path: route.path,
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      security,
      // The route's authorization requirement (docs/authorization.md renders the same matrix).
      ...openApiExtensions(route.access),
      request: {
        ...(route.params ? { params: route.params } : {}),
        ...(route.query ? { query: route.query } : {}),
        ...(route.body ? { body: { required: true, content: { 'application/json': { schema: route.body } } } } : {}),
        ...(route.rawBody
          ? {
              body: {
                required: true,
                description: route.rawBody.description,
                content: { [route.rawBody.contentType]: { schema: z.string().meta({ format: 'binary' }) } },
              },
            }
          : {}),
        ...(route.idempotency
          ? {
              headers: z.object({
                'idempotency-key': route.idempotency === 'required' ? z.string().min(1).max(255) : z.string().min(1).max(255).optional(),
              }),
            }
          : {}),
      },
      responses: Object.fromEntries(
        Object.entries(route.responses).map(([status, r]) => [
          status,
          {
            description: r.description,
            ...(r.schema && r.mediaType ? { content: { [r.mediaType]: { schema: r.schema } } } : {}),
            ...(r.schema && !r.mediaType ? { content: { 'application/json': { schema: wrapForFamily(route, status, r.schema) } } } : {}),
          },
        ]),
      ),
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Workflow automation service API',
      version: opts.version,
      description: 'Workspace-scoped REST API. Every `/api/v1` route takes `Authorization: Bearer <API key>`.',
    },
    servers: [{ url: '/' }],
  });
}

function wrapForFamily(route: AnyRoute, status: string, schema: z.ZodType): z.ZodType {
  // `default` documents replies the route does not shape (e.g. a Response node's), so they are not wrapped.
  if (route.family !== 'envelope' || status === 'default' || Number(status) >= 400) return schema;
  return z.object({ ok: z.literal(true), data: schema, meta: z.object({ contractVersion: z.literal('api-contracts.v1') }) });
}
