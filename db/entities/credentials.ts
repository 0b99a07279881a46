import { p, type InferEntity } from '@mikro-orm/core';
import { entity, HIDDEN, timestamps } from './columns';
import { workspaceOwned } from './workspaces';

/** Where a credential's secret came from: the request body, or a deployment variable copied at write time. */
export type CredentialSource = 'inline' | 'env';

export const CredentialSchema = entity('Credential', 'credentials', {
  ...workspaceOwned(),
  name: p.string(),
  type: p.string(),
  secretEncrypted: p.text().hidden(HIDDEN),
  source: p.string().$type<CredentialSource>(),
  /** For `source: env`: the deployment variable the value was copied from (a name, never a value). */
  envVar: p.string().nullable(),
  createdById: p.string().nullable(),
  /**
   * Hosts (`host`, `host:port`, `*.domain`) the credential may be sent to besides those its
   * value and its provider imply (services/credentials/destinations.ts). Changing them needs
   * the secret again.
   */
  allowedHosts: p.array().columnType('text[]').default('{}'),
  ...timestamps(),
});
/**
 * A workspace credential. The value (a JSON object whose shape depends on `type`) is stored only
 * as `secretEncrypted`: AES-256-GCM under the credentials keyring, with the workspace id and
 * the credential id as associated data (services/credentials/keys.ts). Nothing else about the
 * secret is stored in the clear: masks and OAuth scopes are computed from the decrypted value.
 */
export type Credential = InferEntity<typeof CredentialSchema>;
