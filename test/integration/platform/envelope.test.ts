/**
 * The envelope family (knowledge connectors, files, research, command jobs) through the real
 * route machinery: auth, validation, idempotency and errors, on routes defined here because
 * no envelope area exists yet.
 */
import { z } from 'zod';
import { defineRoute } from '../../../api/http/route';
import { decodeCursor, encodeCursor } from '../../../services/kernel/pagination';
import { notFound } from '../../../services/kernel/errors';
import { addUserWithKey, useTestStack, type Enveloped } from '../../kit';

let counter = 0;
const routes = [
  defineRoute({
    method: 'get',
    path: '/api/v1/envelope-probe',
    operationId: 'probeList',
    summary: 'probe',
    tags: ['Test'],
    family: 'envelope',
    access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
    query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(50), cursor: z.string().optional() }),
    responses: {
      200: { description: 'ok', schema: z.strictObject({ limit: z.number().int(), position: z.unknown(), workspaceId: z.string() }) },
    },
    handler: async (_ctx, { query, principal }) => {
      const position = query.cursor ? decodeCursor(query.cursor) : null;
      return { status: 200, body: { limit: query.limit, position, workspaceId: principal.workspaceId } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/envelope-probe',
    operationId: 'probeCreate',
    summary: 'probe',
    tags: ['Test'],
    family: 'envelope',
    access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
    body: z.object({ name: z.string().min(1) }).strict(),
    idempotency: 'required',
    responses: {
      201: { description: 'ok', schema: z.strictObject({ item: z.strictObject({ name: z.string(), serial: z.number().int() }) }) },
    },
    handler: async (_ctx, { body }) => ({ status: 201, body: { item: { name: body.name, serial: ++counter } } }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/envelope-probe/{id}',
    operationId: 'probeGet',
    summary: 'probe',
    tags: ['Test'],
    family: 'envelope',
    access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
    params: z.object({ id: z.string() }),
    responses: { 200: { description: 'ok' } },
    handler: async (_ctx, { params }) => {
      throw notFound(`Item ${params.id} not found.`);
    },
  }),
];

const META = { contractVersion: 'api-contracts.v1' };

type Probe = Enveloped<{ limit: number; position: unknown; workspaceId: string }>;
type Created = Enveloped<{ item: { name: string; serial: number } }>;

const stack = useTestStack({ routes, worker: false });

describe('envelope family', () => {
  test('success wraps data with ok and meta.contractVersion', async () => {
    const res = await stack.api.get<Probe>('/api/v1/envelope-probe');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, data: { limit: 50, position: null, workspaceId: stack.ws.workspaceId }, meta: META });
  });

  test('missing bearer is 401 authentication_required; a non-workspace key is 403 authorization_failed', async () => {
    const missing = await stack.as().get<Probe>('/api/v1/envelope-probe');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ ok: false, error: { code: 'authentication_required', message: 'Valid bearer API key is required' } });
    const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
    const refused = await stack.as(personal.token).get<Probe>('/api/v1/envelope-probe');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ ok: false, error: { code: 'authorization_failed', message: 'A workspace API key is required.' } });
  });

  test('bad limit is 400 request_malformed; bad cursor 400 validation_failed; a good cursor round-trips', async () => {
    const limit = await stack.api.get<Probe>('/api/v1/envelope-probe?limit=500');
    expect(limit.status).toBe(400);
    expect(limit.body.error.code).toBe('request_malformed');
    const cursor = await stack.api.get<Probe>('/api/v1/envelope-probe?cursor=%%%');
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe('validation_failed');
    const position = { createdAt: new Date('2026-01-02T03:04:05.678Z'), id: 'file_1' };
    const ok = await stack.api.get<Probe>(`/api/v1/envelope-probe?cursor=${encodeCursor(position)}`);
    expect(ok.body.data.position).toEqual({ createdAt: '2026-01-02T03:04:05.678Z', id: 'file_1' });
  });

  test('missing Idempotency-Key on a mutation is 400 idempotency_key_invalid; body errors are validation_failed', async () => {
    const missing = await stack.api.post<Created>('/api/v1/envelope-probe', { name: 'a' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('idempotency_key_invalid');
    const bad = await stack.api.post<Created>('/api/v1/envelope-probe', { name: '' }, { headers: { 'idempotency-key': 'k-bad' } });
    expect(bad.status).toBe(400);
    expect(bad.body.ok).toBe(false);
    expect(bad.body.error.code).toBe('validation_failed');
  });

  test('replay returns the stored envelope; a different body is 409 idempotency_replay_mismatch', async () => {
    const headers = { 'idempotency-key': 'k-1' };
    const first = await stack.api.post<Created>('/api/v1/envelope-probe', { name: 'a' }, { headers });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ ok: true, data: { item: { name: 'a' } }, meta: META });
    const replay = await stack.api.post<Created>('/api/v1/envelope-probe', { name: 'a' }, { headers });
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    const mismatch = await stack.api.post<Created>('/api/v1/envelope-probe', { name: 'b' }, { headers });
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.error.code).toBe('idempotency_replay_mismatch');
  });

  test('typed errors keep their status with the default code; malformed JSON stays inside the envelope', async () => {
    const missing = await stack.api.get<Enveloped>('/api/v1/envelope-probe/abc');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ ok: false, error: { code: 'resource_not_found', message: 'Item abc not found.' } });
    const malformed = await stack.api.request<Created>('POST', '/api/v1/envelope-probe', {
      rawBody: '{',
      headers: { 'idempotency-key': 'k-2' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.ok).toBe(false);
  });
});
