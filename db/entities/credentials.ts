import { EntitySchema } from '@mikro-orm/core';

/** Where a credential's secret came from: the request body, or a deployment variable copied at write time. */
export type CredentialSource = 'inline' | 'env';

/**
 * A workspace credential. The value (a JSON object whose shape depends on `type`) is stored only
 * as `secretEncrypted`: AES-256-GCM under the credentials keyring, with the workspace id and
 * the credential id as associated data (services/credentials/keys.ts). Nothing else about the
 * secret is stored in the clear: masks and OAuth scopes are computed from the decrypted value.
 */
export interface Credential {
  id: string;
  workspaceId: string;
  name: string;
  type: string;
  secretEncrypted: string;
  source: CredentialSource;
  /** For `source: env`: the deployment variable the value was copied from (a name, never a value). */
  envVar: string | null;
  createdById: string | null;
  /**
   * Hosts (`host`, `host:port`, `*.domain`) the credential may be sent to besides those its
   * value and its provider imply (services/credentials/destinations.ts). Changing them needs
   * the secret again.
   */
  allowedHosts: string[];
  createdAt: Date;
  updatedAt: Date;
}

export const CredentialSchema = new EntitySchema<Credential>({
  name: 'Credential',
  tableName: 'credentials',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    name: { type: 'string' },
    type: { type: 'string' },
    secretEncrypted: { type: 'text', fieldName: 'secret_encrypted', hidden: true },
    source: { type: 'string' },
    envVar: { type: 'string', fieldName: 'env_var', nullable: true },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    allowedHosts: { type: 'string[]', fieldName: 'allowed_hosts', columnType: 'text[]', default: '{}' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
