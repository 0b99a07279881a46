/** The operator command, run exactly as its contract says, against the test database. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { http, useTestStack } from '../../kit';
import { testEnv } from '../../support/env';

const run = promisify(execFile);
const stack = useTestStack({ worker: false });

async function admin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'admin', '--', ...args], {
      cwd: path.resolve(__dirname, '../../..'),
      env: { ...process.env, DATABASE_URL: testEnv('databaseUrl'), LOG_LEVEL: 'info' },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test('create-workspace prints one JSON line whose key works, and reuses an existing user only with the right password', async () => {
  const email = `ops-${Date.now()}@example.test`;
  const first = await admin(['create-workspace', '--name', 'Ops', '--owner-email', email, '--owner-password', 'opspassword1', '--json']);
  expect(first.code).toBe(0);
  const lines = first.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const out = JSON.parse(lines[0]);
  expect(out).toEqual({
    workspace: { id: expect.stringMatching(/^ws_/), name: 'Ops' },
    user: { id: expect.stringMatching(/^usr_/), email },
    apiKey: {
      id: expect.stringMatching(/^key_/),
      name: expect.any(String),
      scope: 'workspace',
      token: expect.stringMatching(/^hise_[A-Za-z0-9_-]{32}$/),
    },
  });
  const res = await http<{ workspace: unknown }>(stack.app, 'GET', '/api/v1/workspaces', { token: out.apiKey.token });
  expect(res.status).toBe(200);
  expect(res.body.workspace).toMatchObject({ id: out.workspace.id, name: 'Ops' });

  const wrong = await admin([
    'create-workspace',
    '--name',
    'Ops 2',
    '--owner-email',
    email,
    '--owner-password',
    'not-the-password',
    '--json',
  ]);
  expect(wrong.code).not.toBe(0);
  expect(wrong.stdout).toBe('');
  expect(wrong.stderr).toMatch(/password/i);

  const second = await admin([
    'create-workspace',
    '--name',
    'Ops 2',
    '--owner-email',
    email.toUpperCase(),
    '--owner-password',
    'opspassword1',
    '--json',
  ]);
  expect(second.code).toBe(0);
  const out2 = JSON.parse(second.stdout);
  expect(out2.user.id).toBe(out.user.id);
  expect(out2.workspace.id).not.toBe(out.workspace.id);
});

test('missing arguments print the usage on stderr and exit non-zero', async () => {
  const res = await admin(['create-workspace', '--name', 'X']);
  expect(res.code).not.toBe(0);
  expect(res.stderr).toMatch(/usage: admin create-workspace/);
});
