/**
 * Credentials CRUD over real HTTP and PostgreSQL: every route, the type schemas, masks, OAuth
 * scopes, environment sources, key scopes, other workspaces (404, nothing changed), and
 * ciphertexts that were tampered with or copied to another row. No response carries a secret.
 */
import type { z } from 'zod';
import type { credentialTestSchema } from '../../../api/schemas/credentials';
import { SecretTracker } from '../../support/secrets';
import {
  addUserWithKey,
  createWorkspace,
  http,
  useTestStack,
  type ApiError,
  type CredentialEnvelope,
  type CredentialList,
  type HttpOptions,
  type HttpResult,
} from '../../kit';

const C = '/api/v1/credentials';
/** What a refusal carries besides `error`: the schema `issues` of an invalid value. */
type Refusal = Partial<ApiError> & { issues?: unknown[] };
type CredentialAnswer = CredentialEnvelope & Refusal;
type CredentialTest = z.infer<typeof credentialTestSchema> & Refusal;
/** A row of the credentials table as PostgreSQL holds it. */
interface CredentialRow {
  secret_encrypted: string;
  [column: string]: unknown;
}
/** Every secret a test sends; none may come back in any response. */
const tracker = new SecretTracker();
const secret = (label: string) => tracker.secret(label);

async function call<T = CredentialAnswer>(method: string, path: string, opts: HttpOptions = {}): Promise<HttpResult<T>> {
  const res = await http<T>(stack.app, method, path, opts);
  tracker.seen(res.text);
  return res;
}
const create = (body: unknown, token = stack.ws.token) => call('POST', C, { token, body });
const list = async (token = stack.ws.token) => (await call<CredentialList>('GET', C, { token })).body.credentials;
const testCredential = (id: string, token?: string) => call<CredentialTest>('POST', `${C}/${id}/test`, { token });
const row = async (id: string): Promise<CredentialRow | undefined> =>
  (await stack.app.orm.em.fork().getConnection().execute<CredentialRow[]>('select * from credentials where id = ?', [id]))[0];

const stack = useTestStack(() => {
  process.env.CRED_TEST_ALLOWED = 'env-bearer-value-0123456789';
  process.env.CRED_TEST_TYPED = JSON.stringify({ username: 'envuser', password: 'env-password-0123456789' });
  process.env.CRED_TEST_NOT_ALLOWED = 'never-copied-0123456789';
  tracker.add('env-bearer-value-0123456789', 'env-password-0123456789', 'never-copied-0123456789');
  return {
    worker: false,
    workspaceName: 'Credentials',
    config: {
      credentials: {
        key: undefined,
        previousKeys: [],
        envAllowlist: [
          { name: 'CRED_TEST_ALLOWED', type: null },
          { name: 'CRED_TEST_TYPED', type: 'basic' },
          { name: 'CRED_TEST_UNSET', type: null },
        ],
        testTimeoutMs: 2_000,
        providerBaseUrls: {},
      },
    },
  };
});

test('create answers 201 { credential } without the value; the list shows a masked value; PostgreSQL holds only ciphertext', async () => {
  const token = secret('bearer-token');
  const res = await create({ name: 'Deploy bot', type: 'bearer', value: token });
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    credential: {
      id: expect.stringMatching(/^cred_/),
      workspaceId: stack.ws.workspaceId,
      name: 'Deploy bot',
      type: 'bearer',
      scope: 'workspace',
      source: 'inline',
      allowedHosts: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    },
  });
  const listed = (await list()).find((c) => c.id === res.body.credential.id);
  expect(listed).toMatchObject({
    name: 'Deploy bot',
    type: 'bearer',
    maskedValue: `${token.slice(0, 4)}••••••••${token.slice(-2)}`,
    readable: true,
  });
  const stored = await row(res.body.credential.id);
  expect(stored!.secret_encrypted).toMatch(/^k1\.[A-Za-z0-9_-]{12}\./);
  const dump = JSON.stringify(await stack.app.orm.em.fork().getConnection().execute('select * from credentials'));
  expect(dump).not.toContain(token);
  expect(dump).not.toContain(token.slice(0, 12));
  // Short secrets are all bullets.
  const short = await create({ name: 'Short', type: 'bearer', value: 'abc123' });
  expect((await list()).find((c) => c.id === short.body.credential.id)?.maskedValue).toBe('••••••••');
});

test('every type has a schema: valid values are stored, invalid ones are a 400 naming the field, never the value', async () => {
  const valid: Record<string, unknown> = {
    api_key: { headerName: 'X-Api-Token', apiKey: secret('api-key') },
    bearer: secret('bearer'),
    basic: { username: 'alice', password: secret('basic-pass') },
    oauth2: {
      accessToken: secret('access'),
      refreshToken: secret('refresh'),
      tokenUrl: 'https://auth.example.test/token',
      clientId: 'client',
      clientSecret: secret('client-secret'),
    },
    http_header: { headerName: 'X-Custom-Auth', headerValue: secret('header') },
    smtp: { host: 'smtp.example.test', port: 587, username: 'mailer', password: secret('smtp-pass') },
    imap: { host: 'imap.example.test', username: 'reader', password: secret('imap-pass') },
    mailA: secret('mail-a'),
    mailB: { token: secret('mail-b') },
    drive: { token: secret('drive'), baseUrl: 'https://drive.example.test/v3' },
    wiki: { token: secret('wiki'), username: 'me@example.test' },
    chat: secret('chat'),
    repo: secret('repo'),
    ci: { token: secret('ci'), username: 'builder' },
    errtracker: secret('errtracker'),
    llm: { baseUrl: 'https://llm.example.test/v1', apiKey: secret('llm'), model: 'model-a' },
  };
  for (const [type, value] of Object.entries(valid)) {
    const res = await create({ name: `type ${type}`, type, value });
    expect({ type, status: res.status }).toEqual({ type, status: 201 });
  }
  const listed = await list();
  for (const type of Object.keys(valid))
    expect(listed.find((c) => c.name === `type ${type}`)).toMatchObject({
      type,
      readable: true,
      maskedValue: expect.stringContaining('••••••••'),
    });

  const leaked = secret('leaked');
  const invalid: Array<[string, unknown, RegExp]> = [
    ['basic', leaked, /Invalid basic credential: value: a basic credential needs an object value/],
    ['basic', { username: 'a:b', password: leaked }, /value\.username: must not contain ":"/],
    ['oauth2', { accessToken: leaked, refreshToken: leaked }, /value\.tokenUrl: tokenUrl is required with a refreshToken/],
    ['bearer', `${leaked}\r\nX-Injected: yes`, /value\.token: must be printable ASCII without line breaks/],
    ['smtp', { host: 'smtp.example.test', port: 70000, username: 'u', password: leaked }, /value\.port/],
    ['imap', { host: 'bad host!', username: 'u', password: leaked }, /value\.host: must be a host name/],
    ['llm', { baseUrl: 'ftp://x', apiKey: leaked, model: 'm' }, /value\.baseUrl: must be an http\(s\) URL/],
    ['ci', { token: leaked }, /value\.username: username is required for ci/],
    ['api_key', { apiKey: leaked, extra: leaked }, /unknown field\(s\) "extra"/],
  ];
  for (const [type, value, message] of invalid) {
    const res = await create({ name: `bad ${type}`, type, value });
    expect({ type, status: res.status }).toEqual({ type, status: 400 });
    expect(res.body.error).toMatch(message);
    expect(res.body.issues?.length).toBeGreaterThan(0);
  }
  expect((await list()).some((c) => c.name.startsWith('bad '))).toBe(false);
});

test('unknown types, local AI CLI session types and bodies without exactly one of value or envVar are refused', async () => {
  const unknown = await create({ name: 'x', type: 'ftp', value: 'v' });
  expect(unknown.status).toBe(400);
  expect(unknown.body.error).toMatch(
    /^Unknown credential type "ftp". Use one of: api_key, bearer, basic, oauth2, http_header, http_query, http_custom, smtp, imap, mailA, mailB, drive, wiki, chat, repo, ci, errtracker, llm\.$/,
  );
  for (const type of ['cliA', 'cliB', 'local_ai_cli_session']) {
    const res = await create({ name: 'cli', type, value: 'token-value' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Local AI CLI session credentials cannot be created here; use POST /api/v1/workers/local-ai-cli/session.');
  }
  expect((await create({ name: 'neither', type: 'bearer' })).body.error).toBe('Send exactly one of value or envVar.');
  expect((await create({ name: 'both', type: 'bearer', value: 'v', envVar: 'CRED_TEST_ALLOWED' })).body.error).toBe(
    'Send exactly one of value or envVar.',
  );
  const missingName = await create({ type: 'bearer', value: 'v' });
  expect(missingName.status).toBe(400);
  expect(missingName.body.error).toMatch(/name is required/);
  expect((await create({ name: 'x', type: 'bearer', value: 'v', scope: 'personal' })).status).toBe(400);
  expect((await create({ name: '   ', type: 'bearer', value: 'v' })).status).toBe(400);
});

test('a duplicate name in the workspace (any case) updates the existing credential', async () => {
  const first = await create({ name: 'Shared Token', type: 'bearer', value: secret('first') });
  const second = await create({ name: '  shared token ', type: 'api_key', value: { headerName: 'X-Key', apiKey: secret('second-value') } });
  expect(second.status).toBe(201);
  expect(second.body.credential).toMatchObject({ id: first.body.credential.id, name: 'shared token', type: 'api_key' });
  const matching = (await list()).filter((c) => c.name.toLowerCase() === 'shared token');
  expect(matching).toHaveLength(1);
  expect(matching[0].maskedValue).toMatch(/^seco••••••••/);
  // The same name in another workspace is another credential.
  const other = await createWorkspace(stack.app, 'Other names');
  const elsewhere = await create({ name: 'Shared Token', type: 'bearer', value: secret('other') }, other.token);
  expect(elsewhere.body.credential.id).not.toBe(first.body.credential.id);
});

test('PATCH renames and replaces the value; omitting value keeps the secret; a new type needs the secret', async () => {
  const token = secret('patch-original');
  const { body } = await create({ name: 'Patch me', type: 'repo', value: token });
  const id = body.credential.id;
  const before = await row(id);

  const renamed = await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { name: 'Patched' } });
  expect(renamed.status).toBe(200);
  expect(renamed.body.credential).toMatchObject({ id, name: 'Patched', type: 'repo' });
  expect((await row(id))!.secret_encrypted).toBe(before!.secret_encrypted);

  // The type decides where the secret may go, so even one that would accept the stored value needs the secret (issue 27).
  for (const type of ['chat', 'basic']) {
    const retyped = await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { type } });
    expect(retyped.status).toBe(400);
    expect(retyped.body.error).toBe("Changing a credential's type requires its secret: send value (or envVar) with the new type.");
  }
  expect((await list()).find((c) => c.id === id)).toMatchObject({
    type: 'repo',
    maskedValue: `${token.slice(0, 4)}••••••••${token.slice(-2)}`,
  });
  // The same type again is no change.
  expect((await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { type: 'repo' } })).status).toBe(200);

  const replaced = secret('patch-new');
  const changed = await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { name: 'Patched', type: 'bearer', value: replaced } });
  expect(changed.status).toBe(200);
  expect((await list()).find((c) => c.id === id)).toMatchObject({
    type: 'bearer',
    maskedValue: `${replaced.slice(0, 4)}••••••••${replaced.slice(-2)}`,
  });

  const bad = await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { value: { token: '' } } });
  expect(bad.status).toBe(400);
  expect((await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: {} })).body.error).toBe(
    'Send at least one of name, type, value, envVar or allowedHosts.',
  );
  await create({ name: 'Taken name', type: 'bearer', value: secret('taken') });
  const clash = await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { name: 'TAKEN NAME' } });
  expect(clash.status).toBe(409);
  expect(clash.body.error).toBe('A credential named "TAKEN NAME" already exists in this workspace.');
});

test('DELETE answers { deleted: true }; missing ids are 404 on every id route', async () => {
  const { body } = await create({ name: 'Delete me', type: 'bearer', value: secret('delete') });
  const id = body.credential.id;
  const deleted = await call('DELETE', `${C}/${id}`, { token: stack.ws.token });
  expect(deleted.status).toBe(200);
  expect(deleted.body).toEqual({ deleted: true });
  expect(await row(id)).toBeUndefined();
  for (const missing of [id, 'cred_doesnotexist']) {
    expect((await call('PATCH', `${C}/${missing}`, { token: stack.ws.token, body: { name: 'x' } })).body).toEqual({
      error: 'Credential not found',
    });
    expect((await call('DELETE', `${C}/${missing}`, { token: stack.ws.token })).status).toBe(404);
    expect((await testCredential(missing, stack.ws.token)).status).toBe(404);
  }
});

test("another workspace's ids are 404 on every id route and nothing changes", async () => {
  const { body } = await create({ name: 'Guarded', type: 'bearer', value: secret('guarded') });
  const id = body.credential.id;
  const before = await row(id);
  const other = await createWorkspace(stack.app, 'Intruder');
  const patch = await call('PATCH', `${C}/${id}`, { token: other.token, body: { name: 'Stolen', value: 'overwritten-value' } });
  expect(patch.status).toBe(404);
  expect(patch.body).toEqual({ error: 'Credential not found' });
  expect((await call('DELETE', `${C}/${id}`, { token: other.token })).status).toBe(404);
  expect((await testCredential(id, other.token)).status).toBe(404);
  expect(await row(id)).toEqual(before);
  expect((await list(other.token)).map((c) => c.id)).not.toContain(id);
  // A duplicate name from the other workspace creates its own row.
  await create({ name: 'Guarded', type: 'bearer', value: secret('intruder') }, other.token);
  expect(await row(id)).toEqual(before);
});

test('create, update, delete and list need a workspace key; the test route takes any valid key of the workspace', async () => {
  const { body } = await create({ name: 'Scoped', type: 'bearer', value: secret('scoped') });
  const id = body.credential.id;
  const before = await row(id);
  for (const scope of ['personal', 'copilot'] as const) {
    const { token } = await addUserWithKey(stack.app, stack.ws, 'member', scope);
    for (const [method, path, reqBody] of [
      ['GET', C, undefined],
      ['POST', C, { name: 'Nope', type: 'bearer', value: 'nope-value' }],
      ['PATCH', `${C}/${id}`, { name: 'Nope' }],
      ['DELETE', `${C}/${id}`, undefined],
    ] as const) {
      const res = await call(method, path, { token, body: reqBody });
      expect({ scope, method, status: res.status, body: res.body }).toEqual({
        scope,
        method,
        status: 403,
        body: { error: 'A workspace API key is required.' },
      });
    }
    const tested = await testCredential(id, token);
    expect(tested.status).toBe(200);
    expect(tested.body.result).toMatchObject({ ok: false, status: 'not_configured' });
  }
  const org = await addUserWithKey(stack.app, stack.ws, 'admin', 'organization');
  expect((await testCredential(id, org.token)).status).toBe(403);
  expect((await call('GET', C)).status).toBe(401);
  // A viewer's workspace key lists but cannot write.
  const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer', 'workspace');
  expect((await call('GET', C, { token: viewer.token })).status).toBe(200);
  expect((await call('POST', C, { token: viewer.token, body: { name: 'V', type: 'bearer', value: 'viewer-value' } })).status).toBe(403);
  expect(await row(id)).toEqual(before);
  expect((await list()).some((c) => c.name === 'Nope' || c.name === 'V')).toBe(false);
});

test('envVar copies an allowed deployment variable at create time; other names are a 400', async () => {
  const created = await create({ name: 'From env', type: 'bearer', envVar: 'CRED_TEST_ALLOWED' });
  expect(created.status).toBe(201);
  expect(created.body.credential).toMatchObject({ source: 'env', type: 'bearer' });
  const typed = await create({ name: 'Typed env', type: 'basic', envVar: 'CRED_TEST_TYPED' });
  expect(typed.status).toBe(201);
  // Copied, not referenced: changing the variable later changes nothing.
  process.env.CRED_TEST_ALLOWED = 'changed-later-0123456789';
  tracker.add('changed-later-0123456789');
  expect((await list()).find((c) => c.id === created.body.credential.id)?.maskedValue).toBe('env-••••••••89');

  const refused = await create({ name: 'Not allowed', type: 'bearer', envVar: 'CRED_TEST_NOT_ALLOWED' });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toBe(
    'Environment variable "CRED_TEST_NOT_ALLOWED" is not an allowed credential source (CREDENTIAL_ENV_ALLOWLIST).',
  );
  expect((await create({ name: 'Path', type: 'bearer', envVar: 'PATH' })).status).toBe(400);
  expect((await create({ name: 'Unset', type: 'bearer', envVar: 'CRED_TEST_UNSET' })).body.error).toBe(
    'Environment variable "CRED_TEST_UNSET" is not set on this server.',
  );
  expect((await create({ name: 'Wrong type', type: 'bearer', envVar: 'CRED_TEST_TYPED' })).body.error).toBe(
    'Environment variable "CRED_TEST_TYPED" holds a basic credential, not bearer.',
  );
  expect((await list()).map((c) => c.name)).not.toEqual(expect.arrayContaining(['Not allowed', 'Path', 'Unset', 'Wrong type']));
});

test('oauthScopes are exposed when the stored value has scopes', async () => {
  const scoped = await create({
    name: 'Scoped OAuth',
    type: 'oauth2',
    value: { accessToken: secret('scoped-access'), scopes: 'repo read:org' },
  });
  expect(scoped.body.credential.oauthScopes).toEqual(['repo', 'read:org']);
  const plain = await create({ name: 'Plain OAuth', type: 'oauth2', value: secret('plain-access') });
  expect(plain.body.credential).not.toHaveProperty('oauthScopes');
  const listed = await list();
  expect(listed.find((c) => c.id === scoped.body.credential.id)?.oauthScopes).toEqual(['repo', 'read:org']);
  expect(listed.find((c) => c.id === plain.body.credential.id)).not.toHaveProperty('oauthScopes');
});

test('a tampered ciphertext is refused: unreadable in the list and the test, and a new value recovers it', async () => {
  const { body } = await create({ name: 'Tampered', type: 'bearer', value: secret('tampered') });
  const id = body.credential.id;
  const sealed = (await row(id))!.secret_encrypted;
  const parts = sealed.split('.');
  const data = Buffer.from(parts[4], 'base64url');
  data[0] ^= 0x01;
  parts[4] = data.toString('base64url');
  await stack.app.orm.em
    .fork()
    .getConnection()
    .execute('update credentials set secret_encrypted = ? where id = ?', [parts.join('.'), id]);

  expect((await list()).find((c) => c.id === id)).toMatchObject({ readable: false, maskedValue: null });
  const tested = await testCredential(id, stack.ws.token);
  expect(tested.body.result).toMatchObject({ ok: false, status: 'unreadable' });
  const retype = await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { type: 'repo' } });
  expect(retype.status).toBe(400);
  const recovered = await call('PATCH', `${C}/${id}`, { token: stack.ws.token, body: { value: secret('recovered') } });
  expect(recovered.status).toBe(200);
  expect((await list()).find((c) => c.id === id)).toMatchObject({ readable: true });
});

test('a row copied to another id or moved to another workspace does not decrypt', async () => {
  const { body } = await create({ name: 'Original', type: 'bearer', value: secret('original') });
  const id = body.credential.id;
  const conn = stack.app.orm.em.fork().getConnection();
  await conn.execute(
    `insert into credentials (id, workspace_id, name, type, secret_encrypted, source, created_at, updated_at)
     select 'cred_copied_row', workspace_id, 'Copy', type, secret_encrypted, source, created_at, updated_at from credentials where id = ?`,
    [id],
  );
  expect((await list()).find((c) => c.id === 'cred_copied_row')).toMatchObject({ readable: false, maskedValue: null });
  expect((await testCredential('cred_copied_row', stack.ws.token)).body.result.status).toBe('unreadable');
  expect((await list()).find((c) => c.id === id)).toMatchObject({ readable: true });

  const other = await createWorkspace(stack.app, 'Receiver');
  await conn.execute('update credentials set workspace_id = ? where id = ?', [other.workspaceId, 'cred_copied_row']);
  expect((await list(other.token)).find((c) => c.id === 'cred_copied_row')).toMatchObject({ readable: false });
  // The same ciphertext moved with the original id to another workspace fails too.
  await conn.execute('update credentials set workspace_id = ? where id = ?', [other.workspaceId, id]);
  expect((await list(other.token)).find((c) => c.id === id)).toMatchObject({ readable: false });
  await conn.execute('update credentials set workspace_id = ? where id = ?', [stack.ws.workspaceId, id]);
  expect((await list()).find((c) => c.id === id)).toMatchObject({ readable: true });
});

// Runs last (tests run in file order).
test('no response of this file carried a secret it was sent', () => {
  expect(tracker.texts.length).toBeGreaterThan(50);
  expect(tracker.leaksInSeen()).toEqual([]);
});
