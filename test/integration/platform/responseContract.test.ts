/**
 * The response contract: every route declares a real schema for each success status, the
 * OpenAPI document shows them, and with VALIDATE_RESPONSES on (the harness default) an answer
 * that breaks its declared schema is a 500 instead of reaching the client.
 */
import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../../../api/http/route';
import { useTestStack, type Enveloped } from '../../kit';

/** What a broken answer becomes: a 500 naming the route and the zod issues. */
interface ContractViolation {
  error: string;
  code: string;
  issues: Array<{ path: string; [field: string]: unknown }>;
}

/** The parts of the OpenAPI document these tests read. */
interface OpenApiSchema {
  type?: string;
  required?: string[];
  additionalProperties?: unknown;
  [keyword: string]: unknown;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: OpenApiSchema }> }> }>>;
  components: { schemas: Record<string, OpenApiSchema> };
}

const probeRoutes: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/probe/kept',
    operationId: 'probeKept',
    summary: 'answers what it declares',
    tags: ['Probe'],
    family: 'bare',
    access: { kind: 'public' },
    responses: { 200: { description: 'ok', schema: z.strictObject({ name: z.string(), at: z.string() }) } },
    // A Date is sent as an ISO string, which is what the schema describes.
    handler: async () => ({ status: 200, body: { name: 'kept', at: new Date(0) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/probe/wrong-type',
    operationId: 'probeWrongType',
    summary: 'declares a string, answers a number',
    tags: ['Probe'],
    family: 'bare',
    access: { kind: 'public' },
    responses: { 200: { description: 'ok', schema: z.strictObject({ name: z.string() }) } },
    handler: async () => ({ status: 200, body: { name: 42 } }),
  }),
  defineRoute({
    method: 'get',
    path: '/probe/undeclared-field',
    operationId: 'probeUndeclaredField',
    summary: 'answers a field its strict schema does not declare',
    tags: ['Probe'],
    family: 'bare',
    access: { kind: 'public' },
    responses: { 200: { description: 'ok', schema: z.strictObject({ name: z.string() }) } },
    handler: async () => ({ status: 200, body: { name: 'a', secret: 'leaked' } }),
  }),
  defineRoute({
    method: 'get',
    path: '/probe/undeclared-status',
    operationId: 'probeUndeclaredStatus',
    summary: 'answers a status it does not declare',
    tags: ['Probe'],
    family: 'bare',
    access: { kind: 'public' },
    responses: { 200: { description: 'ok', schema: z.strictObject({ name: z.string() }) } },
    handler: async () => ({ status: 201, body: { name: 'a' } }),
  }),
  defineRoute({
    method: 'get',
    path: '/probe/envelope',
    operationId: 'probeEnvelope',
    summary: 'envelope route: the schema describes the data inside the envelope',
    tags: ['Probe'],
    family: 'envelope',
    access: { kind: 'public' },
    query: z.object({ broken: z.string().optional() }),
    responses: { 200: { description: 'ok', schema: z.strictObject({ items: z.array(z.string()) }) } },
    handler: async (_ctx, { query }) => ({ status: 200, body: { items: query.broken ? [1] : ['a'] } }),
  }),
];

describe('response contract check', () => {
  const checked = useTestStack({ routes: probeRoutes, worker: false });
  const unchecked = useTestStack({ config: { validateResponses: false }, routes: probeRoutes, worker: false });
  const probe = <T = ContractViolation>(path: string) => checked.as().get<T>(path);

  test('an answer that keeps its declared schema goes through unchanged (dates compared as JSON)', async () => {
    const res = await probe<{ name: string; at: string }>('/probe/kept');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'kept', at: '1970-01-01T00:00:00.000Z' });
  });

  test('a wrongly typed field is a 500 response_contract_violation naming the path', async () => {
    const res = await probe('/probe/wrong-type');
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('response_contract_violation');
    expect(res.body.error).toContain('probeWrongType');
    expect(res.body.issues).toEqual([expect.objectContaining({ path: 'name' })]);
  });

  test('a field the strict schema does not declare is caught, so undocumented data cannot slip out', async () => {
    const res = await probe('/probe/undeclared-field');
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('response_contract_violation');
    expect(res.text).not.toContain('leaked');
  });

  test('a status the route does not declare is caught', async () => {
    const res = await probe('/probe/undeclared-status');
    expect(res.status).toBe(500);
    expect(res.body.error).toContain('201');
  });

  test('envelope routes are checked on the data inside the envelope and fail in the envelope family', async () => {
    const ok = await probe<Enveloped<{ items: string[] }>>('/probe/envelope');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, data: { items: ['a'] }, meta: { contractVersion: 'api-contracts.v1' } });
    const broken = await probe<Enveloped<{ items: string[] }>>('/probe/envelope?broken=1');
    expect(broken.status).toBe(500);
    expect(broken.body).toEqual({ ok: false, error: { code: 'internal_error', message: expect.stringContaining('items.0') } });
  });

  test('the check is opt-in: with validateResponses off the same answers go out as they are', async () => {
    const res = await unchecked.as().get<{ name: unknown }>('/probe/wrong-type');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 42 });
  });
});

describe('OpenAPI response schemas', () => {
  const stack = useTestStack({ worker: false });

  /** An object schema that names no property and types no additional ones: it says nothing. */
  const isEmptyObject = (schema: Record<string, unknown>) =>
    (schema.type === 'object' || schema.type === undefined) &&
    Object.keys((schema.properties as object | undefined) ?? {}).length === 0 &&
    !schema.anyOf &&
    !schema.oneOf &&
    !schema.allOf &&
    !schema.$ref &&
    (schema.additionalProperties === undefined || Object.keys(schema.additionalProperties as object).length === 0);

  test('every route documents a non-empty JSON schema for each success status', async () => {
    const res = await stack.as().get<OpenApiDocument>('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const empty: string[] = [];
    let successResponses = 0;
    for (const [path, operations] of Object.entries(res.body.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const successes = Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status));
        if (successes.length === 0) empty.push(`${method.toUpperCase()} ${path}: no success response`);
        for (const [status, response] of successes) {
          successResponses += 1;
          // JSON unless the route serves raw bytes (file downloads document their own media type).
          const schema = response.content?.['application/json']?.schema ?? Object.values(response.content ?? {})[0]?.schema;
          if (!schema || isEmptyObject(schema)) empty.push(`${method.toUpperCase()} ${path} ${status}`);
        }
      }
    }
    expect(successResponses).toBeGreaterThan(40);
    expect(empty).toEqual([]);
  });

  test('shared objects are components, so clients see one Run and one Workflow', async () => {
    const res = await stack.as().get<OpenApiDocument>('/api/v1/openapi.json');
    expect(Object.keys(res.body.components.schemas)).toEqual(expect.arrayContaining(['Run', 'SafeRun', 'Workflow', 'Webhook']));
    const run = res.body.components.schemas.Run;
    expect(run.required).toEqual(expect.arrayContaining(['id', 'status', 'steps', 'executionEvidence']));
    expect(run.additionalProperties).toBe(false);
  });
});
