/**
 * The Temporal Web UI in a real browser (issue 31): a test stack on its own dev server with the
 * UI enabled, the UI's codec endpoint pointing at the API, and headless Chromium driving it
 * through playwright-core.
 * - filtering by `WorkspaceId` lists that workspace's runs only, with their readable SvcName;
 * - an operator (OPERATOR_EMAILS session, sent by the UI's "include cross-origin credentials")
 *   opens a run and reads its decoded input and output;
 * - a signed-in user who is not an operator (another workspace's owner) sees the encrypted form:
 *   one workspace's credentials never decode another's payloads, nor their own.
 *
 * Skips, saying why, when Chromium is not installed (`.ci/run` installs Debian's `chromium`).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { Connection } from '@temporalio/client';
import { provisionWorkspace } from '../../../services/accounts/bootstrap';
import { loadConfig } from '../../../services/kernel/config';
import { ENCRYPTED_ENCODING } from '../../../services/kernel/payloadCodec';
import { randomToken } from '../../../services/kernel/ids';
import { ensureTemporalCli } from '../../../scripts/lib/temporalCli';
import { startTemporalDevServer, type TemporalDevServer } from '../../../scripts/lib/temporalDevServer';
import { registerSearchAttributes } from '../../../temporal/searchAttributes';
import { chain, deployWorkflow, executeAndWait, http, node, useTestStack, type WorkspaceTarget } from '../../kit';
import type { WorkspaceFixture } from '../../support/harness';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const chromiumMissing = existsSync(CHROMIUM) ? null : `Chromium not found at ${CHROMIUM} (install Debian's chromium or set CHROMIUM_PATH)`;
if (chromiumMissing) console.log(`Skipping the Web UI browser test: ${chromiumMissing}`);
const describeInBrowser = chromiumMissing ? describe.skip : describe;

const OPERATOR_EMAIL = `operator-${randomToken(6).toLowerCase()}@example.test`;
const PASSWORD = 'correct horse battery staple';
const INPUT_MARKER = `input-${randomToken(8)}`;
const OUTPUT_MARKER = `output-${randomToken(8)}`;
const OTHER_MARKER = `other-${randomToken(8)}`;
const WORKFLOW_NAME = 'Nightly invoice digest';
/** How the UI shows a payload it could not decode: its metadata as stored, base64 (`binary/encrypted`). */
const ENCRYPTED_METADATA = Buffer.from(ENCRYPTED_ENCODING).toString('base64');

let server: TemporalDevServer | undefined;
let browser: Browser | undefined;

const stack = useTestStack(async () => {
  server = await startTemporalDevServer({ binary: await ensureTemporalCli(), uiPort: 0 });
  const connection = await Connection.connect({ address: server.address });
  try {
    await registerSearchAttributes(connection, 'default');
  } finally {
    await connection.close();
  }
  const temporal = loadConfig({}).temporal;
  return {
    temporal: { temporalAddress: server.address },
    config: {
      operatorEmails: [OPERATOR_EMAIL],
      temporal: { ...temporal, uiUrl: server.uiUrl ?? undefined, uiOrigins: [server.uiUrl!] },
    },
  };
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

let other: WorkspaceFixture;
let runId: string;
let otherRunId: string;

async function runOnce(on: WorkspaceTarget, name: string, marker: string, outputMarker: string): Promise<string> {
  const { workflowId } = await deployWorkflow(on, chain(node.transform('shape', `{ "echo": secret, "made": "${outputMarker}" }`)), {
    name,
  });
  const run = await executeAndWait(on, workflowId, { secret: marker });
  expect(run.status).toBe('succeeded');
  return run.id;
}

/** A browser context signed in to the API as `email`, whose Temporal UI decodes through the API's codec endpoint with cookies. */
async function signedInContext(email: string, password: string): Promise<BrowserContext> {
  const context = await browser!.newContext();
  const codecEndpoint = `${stack.app.url}/api/temporal-codec`;
  // The UI's "Codec Server" settings (its persisted stores): this endpoint, with cross-origin credentials.
  const settings = { endpoint: codecEndpoint, includeCredentials: true, overrideRemoteCodecConfiguration: true };
  await context.addInitScript(
    Object.entries(settings)
      .map(([key, value]) => `localStorage.setItem(${JSON.stringify(key)}, ${JSON.stringify(JSON.stringify(value))});`)
      .join('\n'),
  );
  const signedIn = await context.request.post(`${stack.app.url}/api/auth/sign-in`, { data: { email, password } });
  expect(signedIn.status()).toBe(200);
  return context;
}

/** The run's page once its input and result are shown, as text. */
async function runPageText(page: Page, id: string, expected: string): Promise<string> {
  await page.goto(`${server!.uiUrl}/namespaces/default/workflows/${id}`);
  await page.getByText(expected).filter({ visible: true }).first().waitFor({ timeout: 60_000 });
  return page.locator('body').innerText();
}

describeInBrowser('the Temporal Web UI', () => {
  beforeAll(async () => {
    await provisionWorkspace(stack.app.orm.em.fork(), { name: 'Operators', ownerEmail: OPERATOR_EMAIL, ownerPassword: PASSWORD });
    other = await stack.workspace('Other tenant');
    runId = await runOnce(stack, WORKFLOW_NAME, INPUT_MARKER, OUTPUT_MARKER);
    otherRunId = await runOnce({ app: stack.app, ws: other }, 'Other tenant flow', OTHER_MARKER, OTHER_MARKER);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  }, 180_000);

  test("filters by a workspace: its runs only, under the workflow's readable name", async () => {
    const context = await signedInContext(OPERATOR_EMAIL, PASSWORD);
    try {
      const page = await context.newPage();
      const query = `WorkspaceId="${stack.ws.workspaceId}"`;
      await page.goto(`${server!.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
      await page.getByText(runId).first().waitFor({ timeout: 60_000 });
      expect(await page.locator('body').innerText()).not.toContain(otherRunId);

      const byName = `SvcName="${WORKFLOW_NAME}"`;
      await page.goto(`${server!.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(byName)}`);
      await page.getByText(runId).first().waitFor({ timeout: 60_000 });
      expect(await page.locator('body').innerText()).not.toContain(otherRunId);
    } finally {
      await context.close();
    }
  }, 120_000);

  test("an operator's session decodes the run's input and output", async () => {
    const context = await signedInContext(OPERATOR_EMAIL, PASSWORD);
    try {
      const text = await runPageText(await context.newPage(), runId, OUTPUT_MARKER);
      expect(text).toContain(INPUT_MARKER);
      expect(text).not.toContain(ENCRYPTED_METADATA);
    } finally {
      await context.close();
    }
  }, 120_000);

  test("another workspace's owner, not an operator, sees the encrypted form of this run and of their own", async () => {
    const context = await signedInContext(other.ownerEmail, other.ownerPassword);
    try {
      const page = await context.newPage();
      for (const id of [runId, otherRunId]) {
        // The UI asked the codec (refused: 401) and shows the payloads as stored.
        const text = await runPageText(page, id, 'Codec Server could not connect');
        expect(text).toContain(ENCRYPTED_METADATA);
        for (const marker of [INPUT_MARKER, OUTPUT_MARKER, OTHER_MARKER]) expect(text).not.toContain(marker);
      }
    } finally {
      await context.close();
    }
  }, 120_000);

  test("the codec refuses a workspace's API key, with CORS headers the UI can read", async () => {
    const res = await http<{ error: string }>(stack.app, 'POST', '/api/temporal-codec/decode', {
      token: other.token,
      body: { payloads: [] },
      headers: { origin: server!.uiUrl! },
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/Operator credentials/);
    expect(res.headers.get('access-control-allow-origin')).toBe(server!.uiUrl);
  });
});
