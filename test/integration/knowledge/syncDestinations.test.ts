/**
 * Knowledge sync sends a connector's credential only to hosts it is bound to (issue 27 item 5):
 * every request of a sync — the base URL and every link the provider answers with — is checked
 * against the credential's `allowedHosts`, the hosts its value names and, for a provider type,
 * the deployment's base URL of that provider. A refusal is 409 `setup_required` (reason
 * `credential_destination_refused`) before any connection to the other host. The "other host"
 * is a second loopback fake.
 */
import { startDriveFake, type DriveFake } from '../../fakes/drive';
import { startProviderFake, type ProviderFake } from '../../fakes/providerServer';
import { useTestStack } from '../../kit';
import { createBase, createConnector, createCredential, key, knowledgeConfig, startRun } from './support';

/** The refusal sentence of a `setup_required` answer: its envelope error's `details.availability.refusal`. */
function refusalText(body: { error: Record<string, unknown> }): unknown {
  const details = body.error.details as { availability?: { refusal?: unknown } } | undefined;
  return details?.availability?.refusal;
}

let drive: DriveFake;
/** A Confluence-like server whose page list links its next page to `elsewhere`. */
let wiki: ProviderFake;
let elsewhere: ProviderFake;

beforeAll(async () => {
  elsewhere = await startProviderFake({
    authorized: () => true,
    unauthorized: { status: 401 },
    handle: () => ({ json: { results: [], _links: {} } }),
  });
  wiki = await startProviderFake({
    authorized: () => true,
    unauthorized: { status: 401 },
    handle: () => ({ json: { results: [], _links: { next: `${elsewhere.url}/wiki/api/v2/spaces/100/pages?cursor=25` } } }),
  });
  drive = await startDriveFake();
});
const stack = useTestStack(async () => {
  const config = await knowledgeConfig();
  // The deployment's Drive address: the host a `drive` credential without baseUrl is bound to, and no other type's.
  return {
    config: {
      ...config,
      knowledge: { ...config.knowledge!, providerBaseUrls: { ...config.knowledge!.providerBaseUrls, drive: drive.url } },
    },
  };
});
afterAll(async () => {
  await Promise.all([drive, wiki, elsewhere].map((f) => f?.close()));
});

const refusal = (credentialId: string) => ({
  ok: false,
  error: {
    code: 'setup_required',
    message: expect.stringContaining('the credential is not bound to the provider'),
    retryable: false,
    details: {
      availability: expect.objectContaining({
        status: 'setup_required',
        reason: 'credential_destination_refused',
        credentialId,
        refusal: expect.any(String),
      }),
    },
  },
});

test('a link the provider answers with to another host is not followed with the credential', async () => {
  const { app, ws } = stack;
  const kb = await createBase(app, ws.token);
  const credentialId = await createCredential(app, ws.token, ws.workspaceId, 'wiki', {
    token: 'atlassian-bound-token',
    username: 'bot@example.test',
    baseUrl: wiki.url,
  });
  const created = await createConnector(app, ws.token, {
    knowledgeBaseId: kb.id,
    providerId: 'wiki',
    name: `wiki ${key()}`,
    config: { credentialId, spaceIds: ['100'] },
  });
  expect(created.status).toBe(201);
  const res = await startRun(app, ws.token, created.body.data.connector.id, { options: { maxPages: 3 } });
  expect(res.status).toBe(409);
  expect(res.body).toEqual(refusal(credentialId));
  const host = (url: string) => new URL(url).host.replace(/\./g, '\\.');
  expect(refusalText(res.body)).toMatch(
    new RegExp(`^Credential "cred-[0-9a-f]+" may not be sent to ${host(elsewhere.url)}: it may be sent only to ${host(wiki.url)}\\.$`),
  );
  expect(wiki.requests.map((r) => r.path)).toEqual(['/wiki/api/v2/spaces/100/pages']);
  expect(elsewhere.requests).toEqual([]);
});

test("an oauth2 credential goes to the deployment's Drive only when it is bound to it", async () => {
  const { app, ws } = stack;
  const kb = await createBase(app, ws.token);
  const connector = async (credentialId: string) => {
    const created = await createConnector(app, ws.token, {
      knowledgeBaseId: kb.id,
      providerId: 'drive',
      name: `drive ${key()}`,
      config: { credentialId },
    });
    expect(created.status).toBe(201);
    return created.body.data.connector.id as string;
  };
  // Made for another service: a writer naming it in a Drive connector must not send it to Drive.
  const unbound = await createCredential(app, ws.token, ws.workspaceId, 'oauth2', { accessToken: 'ya29.fake-token' });
  const refused = await startRun(app, ws.token, await connector(unbound), { options: { maxPages: 1 } });
  expect(refused.status).toBe(409);
  expect(refused.body).toEqual(refusal(unbound));
  expect(refusalText(refused.body)).toMatch(/may not be sent to 127\.0\.0\.1:\d+: it is bound to no host\.$/);
  expect(drive.requests).toEqual([]);

  // Bound to the Drive host where it was made (with its secret): the same sync runs.
  const res = await fetch(`${app.url}/api/v1/credentials`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ws.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: `drive-oauth-${key()}`,
      type: 'oauth2',
      value: { accessToken: 'ya29.fake-token' },
      allowedHosts: [new URL(drive.url).host],
    }),
  });
  expect(res.status).toBe(201);
  const bound = ((await res.json()) as { credential: { id: string } }).credential.id;
  const ok = await startRun(app, ws.token, await connector(bound), { options: { maxPages: 1 } });
  expect(ok.status).toBe(201);
  expect(ok.body.data.run).toMatchObject({ status: 'succeeded', error: null });
  expect(drive.requests.length).toBeGreaterThan(0);
});
