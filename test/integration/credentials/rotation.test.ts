/**
 * Key rotation without downtime: credentials written under one CREDENTIALS_KEY are
 * re-encrypted under a new one (the old key kept in CREDENTIALS_PREVIOUS_KEYS) while the API
 * lists and tests them and runs use them; afterwards the old key can go. Both through the
 * service and through `npm run admin -- rotate-credentials-key`.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startFakeApi, type FakeApi } from '../../fakes/identity';
import type { AppConfig } from '../../../services/kernel/config';
import { credentialKeyring, rotateCredentialKeys } from '../../../services/credentials';
import { keyIdOf } from '../../../services/kernel/secrets';
import { startTestApp, TEST_SECRET_KEY } from '../../support/harness';
import {
  chain,
  deployWorkflow,
  executeAndWait,
  http,
  node,
  useTestStack,
  type CredentialEnvelope,
  type CredentialList,
  type TestApp,
} from '../../kit';
import { testEnv } from '../../support/env';

const C = '/api/v1/credentials';
const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const keys = (key: Buffer, previous: Buffer[] = []): Partial<AppConfig> => ({
  outboundAllowPrivateNetworks: true,
  credentials: {
    key: key.toString('base64'),
    previousKeys: previous.map((k) => k.toString('hex')),
    envAllowlist: [],
    testTimeoutMs: 5_000,
    providerBaseUrls: {},
  },
});

let api: FakeApi;
/** Writes with the old key only: a process not yet given the new one. */
let oldApp: TestApp;
/** Has the new key as current and the old one for reading: the rollout's second step. */
const ids: string[] = [];

const keyIds = async (): Promise<string[]> =>
  (
    await stack.app.orm.em
      .fork()
      .getConnection()
      .execute('select secret_encrypted from credentials where id in (' + ids.map(() => '?').join(',') + ')', ids)
  ).map((r) => String(r.secret_encrypted).split('.')[1]);

async function createWith(app: TestApp, name: string): Promise<string> {
  const token = `rotation-${name}-${randomBytes(8).toString('hex')}`;
  api.accept('authorization', `Bearer ${token}`);
  const res = await http<CredentialEnvelope>(app, 'POST', C, {
    token: stack.ws.token,
    body: { name, type: 'bearer', value: { token, probeUrl: `${api.url}/probe/${name}` } },
  });
  expect(res.status).toBe(201);
  ids.push(res.body.credential.id);
  return res.body.credential.id;
}

/** A live read through the API: every credential listed readable, one tested, one used by a run. */
async function liveRead(app: TestApp, workflowId: string): Promise<void> {
  const listed = await http<CredentialList>(app, 'GET', C, { token: stack.ws.token });
  expect(listed.status).toBe(200);
  const mine = listed.body.credentials.filter((c) => ids.includes(c.id));
  expect(mine).toHaveLength(ids.length);
  expect(mine.every((c) => c.readable)).toBe(true);
  const tested = await http<{ result: unknown }>(app, 'POST', `${C}/${ids[0]}/test`, { token: stack.ws.token });
  expect(tested.body.result).toMatchObject({ ok: true, status: 'passed' });
  expect((await executeAndWait({ app, ws: stack.ws }, workflowId)).status).toBe('succeeded');
}

let workflowId: string;

beforeAll(async () => {
  api = await startFakeApi({ refreshToken: 'r', clientId: 'c', clientSecret: 's' });
  oldApp = await startTestApp(keys(oldKey));
});
const stack = useTestStack(() => ({ config: keys(newKey, [oldKey]) }));
beforeAll(async () => {
  for (let i = 0; i < 9; i++) await createWith(oldApp, `old-${i}`);
  await createWith(stack.app, 'new-0');
  // A workflow whose run uses the last (not yet rotated, in id order or not) credentials.
  ({ workflowId } = await deployWorkflow(
    stack,
    chain(
      node.of('http', 'a', { method: 'GET', url: `${api.url}/probe/old-8`, credentialId: ids[8] }),
      node.of('http', 'b', { method: 'GET', url: `${api.url}/probe/old-0`, credentialId: ids[0] }),
    ),
    { name: 'rotation' },
  ));
});
afterAll(async () => {
  await oldApp?.close();
  await api?.close();
});

test('rotation re-encrypts every row under the new key while reads, tests and runs keep working', async () => {
  expect((await keyIds()).filter((k) => k === keyIdOf(oldKey))).toHaveLength(9);
  await liveRead(stack.app, workflowId);

  const ring = credentialKeyring({ key: newKey.toString('base64'), previousKeys: [oldKey.toString('hex')], secretKey: TEST_SECRET_KEY })!;
  const mixedStates: string[][] = [];
  const report = await rotateCredentialKeys(stack.app.orm.em.fork(), ring, {
    batchSize: 2,
    onBatch: async () => {
      // A live read in the first mixed states only: the table holds every test file's rows of
      // this lane, and a run per batch of 2 would take minutes on a busy machine.
      if (mixedStates.length >= 2) return;
      const state = await keyIds();
      if (!(state.includes(keyIdOf(oldKey)) && state.includes(keyIdOf(newKey)))) return;
      mixedStates.push(state);
      await liveRead(stack.app, workflowId);
    },
  });
  // Reads ran while both keys were in use.
  expect(mixedStates.length).toBeGreaterThan(0);
  // (The command covers the whole table; other test files' rows may share the database.)
  expect(report.keyId).toBe(keyIdOf(newKey));
  expect(report.failed.filter((f) => ids.includes(f.id))).toEqual([]);
  expect(report.rotated).toBeGreaterThanOrEqual(9);
  expect(await keyIds()).toEqual(ids.map(() => keyIdOf(newKey)));

  // The old key can now go: a process with only the new key reads everything...
  const newOnly = await startTestApp(keys(newKey));
  try {
    await liveRead(newOnly, workflowId);
  } finally {
    await newOnly.close();
  }
  // ...and one with only the old key reads nothing any more.
  const listedByOld = await http<CredentialList>(oldApp, 'GET', C, { token: stack.ws.token });
  expect(listedByOld.body.credentials.filter((c) => ids.includes(c.id)).every((c) => c.readable === false)).toBe(true);
});

test('npm run admin -- rotate-credentials-key rotates while the API reads, and reports rows it cannot decrypt', async () => {
  const fresh: string[] = [];
  for (let i = 0; i < 6; i++) fresh.push(await createWith(oldApp, `cli-${i}`));
  // One row tampered with: the command reports it by id and fails, and rotates the rest.
  const tamperedId = await createWith(oldApp, 'cli-tampered');
  const conn = stack.app.orm.em.fork().getConnection();
  const [{ secret_encrypted: sealed }] = await conn.execute('select secret_encrypted from credentials where id = ?', [tamperedId]);
  const parts = (sealed as string).split('.');
  parts[4] = `A${parts[4].slice(1)}` === parts[4] ? `B${parts[4].slice(1)}` : `A${parts[4].slice(1)}`;
  await conn.execute('update credentials set secret_encrypted = ? where id = ?', [parts.join('.'), tamperedId]);
  ids.splice(ids.indexOf(tamperedId), 1);

  const child = spawn(
    path.join(process.cwd(), 'node_modules', '.bin', 'tsx'),
    ['scripts/admin.ts', 'rotate-credentials-key', '--batch-size', '1', '--json'],
    {
      cwd: process.cwd(),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: testEnv('databaseUrl'),
        CREDENTIALS_KEY: newKey.toString('hex'),
        CREDENTIALS_PREVIOUS_KEYS: oldKey.toString('base64'),
        LOG_LEVEL: 'silent',
      },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let done = false;
  void exited.then(() => (done = true));
  // Live reads for as long as the command runs (at least one).
  let reads = 0;
  do {
    await liveRead(stack.app, workflowId);
    reads++;
  } while (!done);
  const code = await exited;
  expect({ code, stderr }).toEqual({ code: 1, stderr: '' });
  const report = JSON.parse(stdout);
  expect(report).toMatchObject({ keyId: keyIdOf(newKey), rotated: 6 });
  expect(report.failed).toContainEqual({ id: tamperedId, reason: 'tampered' });
  expect(report.failed.filter((f: { id: string }) => ids.includes(f.id))).toEqual([]);
  expect(report.scanned).toBeGreaterThanOrEqual(17);
  expect(stdout).not.toMatch(/rotation-cli/);
  expect(reads).toBeGreaterThan(0);
  expect(await keyIds()).toEqual(ids.map(() => keyIdOf(newKey)));
  for (const id of fresh) expect(ids).toContain(id);
});
