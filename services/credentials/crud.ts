import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, WorkspaceRepositorySchema, type Credential, type CredentialSource } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { flushUnique } from '../kernel/flush';
import type { CredentialSettings } from '../kernel/config';
import { conflict, invalidInput } from '../kernel/errors';
import { findInWorkspace } from '../kernel/workspaceScope';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { SealedValueError, type Keyring } from '../kernel/secrets';
import { openCredentialValue, requireKeyring, sealCredentialValue, type CredentialKeySettings } from './keys';
import { credentialDestinations, normalizeAllowedHosts, type ProviderUrls } from './destinations';
import { maskSecret } from './mask';
import { idByName } from './store';
import {
  CREDENTIAL_TYPE_NAMES,
  CREDENTIAL_TYPES,
  isLocalAiCliType,
  maskSource,
  oauthScopesOf,
  parseCredentialValue,
  type CredentialValue,
} from './types';

export const CREDENTIAL_NOT_FOUND = 'Credential not found';

/** What the credential services need from the deployment. */
export interface CredentialDeps {
  keys: CredentialKeySettings;
  envAllowlist: CredentialSettings['envAllowlist'];
  /** Reads a deployment variable (process.env in production). */
  readEnv: (name: string) => string | undefined;
  /** Base URLs the deployment configures per provider type: where provider credentials are bound by default. */
  providerUrls?: ProviderUrls;
}

/** A credential as callers see it: never the value. */
export interface CredentialView extends Pick<Credential, 'id' | 'workspaceId' | 'name' | 'type' | 'source' | 'createdAt' | 'updatedAt'> {
  scope: 'workspace';
  oauthScopes?: string[];
  /** Hosts it may be sent to: those given at creation, those its value names, its provider's. */
  allowedHosts: string[];
}

/** A list entry adds the mask; `maskedValue` is null and `readable` false when the stored value cannot be decrypted. */
export interface CredentialListItem extends CredentialView {
  maskedValue: string | null;
  readable: boolean;
}

export function credentialView(row: Credential, value: CredentialValue | null, providerUrls?: ProviderUrls): CredentialView {
  const scopes = value ? oauthScopesOf(value) : undefined;
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    type: row.type,
    scope: 'workspace',
    source: row.source,
    ...(scopes ? { oauthScopes: scopes } : {}),
    allowedHosts: credentialDestinations(row, value, providerUrls),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Decrypts a stored credential; throws `SealedValueError` (tampered, moved, unknown key). */
export function openCredential(ring: Keyring, row: Credential): CredentialValue {
  return openCredentialValue(ring, row.workspaceId, row.id, row.secretEncrypted);
}

function tryOpen(ring: Keyring, row: Credential): CredentialValue | null {
  try {
    return openCredential(ring, row);
  } catch (err) {
    if (err instanceof SealedValueError) return null;
    throw err;
  }
}

/** Credentials of the principal's workspace, by name, with their masks. */
export async function listCredentials(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: Pick<CredentialDeps, 'keys' | 'providerUrls'>,
): Promise<CredentialListItem[]> {
  const ring = requireKeyring(deps.keys);
  const rows = await em.find(CredentialSchema, { workspaceId: principal.workspaceId }, { orderBy: { name: 'asc', id: 'asc' } });
  return rows.map((row) => {
    const value = tryOpen(ring, row);
    return {
      ...credentialView(row, value, deps.providerUrls),
      maskedValue: value ? maskSecret(maskSource(row.type, value)) : null,
      readable: value !== null,
    };
  });
}

/** One credential of the workspace; 404 for missing ids and for other workspaces' ids alike. */
export async function loadCredential(em: EntityManager, workspaceId: string, id: string): Promise<Credential> {
  return findInWorkspace(em, CredentialSchema, workspaceId, id, CREDENTIAL_NOT_FOUND);
}

/**
 * The credential a workflow node names: a credential id of the workspace, else a credential
 * name (case-insensitive), so imported workflows can name credentials portably. Null when
 * neither matches.
 */
export async function resolveCredentialReference(em: EntityManager, workspaceId: string, reference: string): Promise<Credential | null> {
  const byId = await em.findOne(CredentialSchema, { id: reference, workspaceId });
  if (byId) return byId;
  const id = await idByName(em, workspaceId, reference.trim());
  return id ? em.findOne(CredentialSchema, { id, workspaceId }) : null;
}

/** Refuses local AI CLI session types and unknown types with a 400 naming the accepted ones. */
export function checkCredentialType(type: string): void {
  if (isLocalAiCliType(type)) {
    throw invalidInput('Local AI CLI session credentials cannot be created here; use POST /api/v1/workers/local-ai-cli/session.');
  }
  if (!CREDENTIAL_TYPES[type])
    throw invalidInput(`Unknown credential type "${type.slice(0, 100)}". Use one of: ${CREDENTIAL_TYPE_NAMES.join(', ')}.`);
}

/** Validates a value for its type: a 400 listing what is wrong (paths and rules, never the value). */
export function validateValue(type: string, raw: unknown, from = 'value'): CredentialValue {
  const parsed = parseCredentialValue(type, raw);
  if (parsed.ok) return parsed.value;
  const issues = parsed.problems.map((p) => ({ path: p.path.replace(/^value/, from), message: p.message }));
  throw invalidInput(`Invalid ${type} credential: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { details: { issues } });
}

/**
 * Reads an allowed deployment variable as a credential value of `type`: a JSON object when the
 * variable holds one, else the single secret of the type. The variable must be in
 * CREDENTIAL_ENV_ALLOWLIST (and match the type the allowlist gives it). A JSON object may carry
 * `allowedHosts` beside the type's fields: the operator who wrote the variable binds it there
 * (the writer who names it cannot, see ENV_HOSTS_REFUSED). Messages name the variable, never its value.
 */
export function valueFromEnv(
  deps: Pick<CredentialDeps, 'envAllowlist' | 'readEnv'>,
  envVar: string,
  type: string,
): { value: CredentialValue; allowedHosts: string[] } {
  const allowed = deps.envAllowlist.find((e) => e.name === envVar);
  if (!allowed)
    throw invalidInput(`Environment variable "${envVar.slice(0, 100)}" is not an allowed credential source (CREDENTIAL_ENV_ALLOWLIST).`);
  if (allowed.type && allowed.type !== type)
    throw invalidInput(`Environment variable "${envVar}" holds a ${allowed.type} credential, not ${type}.`);
  const raw = deps.readEnv(envVar);
  if (raw === undefined || raw.trim() === '') throw invalidInput(`Environment variable "${envVar}" is not set on this server.`);
  let value: unknown = raw.trim();
  if (raw.trim().startsWith('{')) {
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalidInput(`Environment variable "${envVar}" starts with "{" but is not valid JSON.`);
    }
  }
  let allowedHosts: string[] = [];
  if (value && typeof value === 'object' && !Array.isArray(value) && 'allowedHosts' in value) {
    const { allowedHosts: hosts, ...rest } = value as Record<string, unknown>;
    if (!Array.isArray(hosts) || !hosts.every((h) => typeof h === 'string'))
      throw invalidInput(`Environment variable "${envVar}": allowedHosts must be an array of host names.`);
    allowedHosts = normalizeAllowedHosts(hosts);
    value = rest;
  }
  return { value: validateValue(type, value, `env ${envVar}`), allowedHosts };
}

export interface CredentialInput {
  name: string;
  type: string;
  value?: unknown;
  envVar?: string;
  /** Hosts it may be sent to besides those its value and provider imply; omitted: none. */
  allowedHosts?: string[];
}

/**
 * Creates a credential, or, when the workspace already has one of that name
 * (case-insensitive), replaces its type and value and takes the new spelling of the name.
 * Returns the view and whether a row was created.
 */
export async function createCredential(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: CredentialDeps,
  input: CredentialInput,
): Promise<{ credential: CredentialView; created: boolean }> {
  const ring = requireKeyring(deps.keys);
  checkCredentialType(input.type);
  if ((input.value === undefined) === (input.envVar === undefined)) throw invalidInput('Send exactly one of value or envVar.');
  if (input.envVar !== undefined && input.allowedHosts?.length) throw invalidInput(ENV_HOSTS_REFUSED);
  const fromEnv = input.envVar !== undefined ? valueFromEnv(deps, input.envVar, input.type) : null;
  const value = fromEnv ? fromEnv.value : validateValue(input.type, input.value);
  const source: CredentialSource = input.envVar !== undefined ? 'env' : 'inline';
  const allowedHosts = fromEnv ? fromEnv.allowedHosts : normalizeAllowedHosts(input.allowedHosts ?? []);
  const name = input.name.trim();
  for (let attempt = 0; ; attempt++) {
    const tx = em.fork();
    const existingId = await idByName(tx, principal.workspaceId, name);
    const now = new Date();
    let row: Credential;
    if (existingId) {
      row = (await tx.findOne(CredentialSchema, { id: existingId }))!;
      // A create is a whole replacement (it carries the secret), so it rebinds the hosts too.
      Object.assign(row, { name, type: input.type, source, envVar: input.envVar ?? null, allowedHosts, updatedAt: now });
      row.secretEncrypted = sealCredentialValue(ring, row.workspaceId, row.id, value);
    } else {
      const id = newId('cred');
      row = tx.create(CredentialSchema, {
        id,
        workspaceId: principal.workspaceId,
        name,
        type: input.type,
        secretEncrypted: sealCredentialValue(ring, principal.workspaceId, id, value),
        source,
        envVar: input.envVar ?? null,
        createdById: principal.userId,
        allowedHosts,
        createdAt: now,
        updatedAt: now,
      });
    }
    recordAudit(tx, principal, {
      action: existingId ? 'credential.update' : 'credential.create',
      severity: 'info',
      workspaceId: principal.workspaceId,
      targetType: 'credential',
      targetId: row.id,
      metadata: { name, type: input.type, source, allowedHosts },
    });
    try {
      await tx.flush();
    } catch (err) {
      // Another request created the same name meanwhile: update that row instead.
      if (err instanceof UniqueConstraintViolationException && attempt === 0) continue;
      throw err;
    }
    return { credential: credentialView(row, value, deps.providerUrls), created: !existingId };
  }
}

export interface CredentialPatch {
  name?: string;
  type?: string;
  value?: unknown;
  envVar?: string;
  allowedHosts?: string[];
}

/**
 * Whoever names an allowed variable need not know its value, so a credential copied from one
 * is bound only where its value and provider say (probeUrl, baseUrl, host), never to hosts the
 * request picks.
 */
export const ENV_HOSTS_REFUSED =
  'allowedHosts cannot be given with envVar: a credential copied from a deployment variable goes only where the variable (its allowedHosts, probeUrl, baseUrl or host) or its provider says.';

export const SECRET_REQUIRED_FOR_TYPE = "Changing a credential's type requires its secret: send value (or envVar) with the new type.";
export const SECRET_REQUIRED_FOR_HOSTS =
  "Changing a credential's allowedHosts requires its secret: send value (or envVar) with the new hosts.";

/**
 * Renames, retypes or replaces the value of a credential. Omitting `value` keeps the secret.
 * The type and `allowedHosts` decide where the secret may be sent, so changing either needs
 * the secret again (a 400 otherwise): whoever cannot read a credential cannot redirect it.
 * A name another credential of the workspace has is a 409.
 */
export async function updateCredential(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: CredentialDeps,
  id: string,
  patch: CredentialPatch,
): Promise<CredentialView> {
  const ring = requireKeyring(deps.keys);
  const row = await loadCredential(em, principal.workspaceId, id);
  if (
    patch.name === undefined &&
    patch.type === undefined &&
    patch.value === undefined &&
    patch.envVar === undefined &&
    patch.allowedHosts === undefined
  ) {
    throw invalidInput('Send at least one of name, type, value, envVar or allowedHosts.');
  }
  if (patch.value !== undefined && patch.envVar !== undefined) throw invalidInput('Send at most one of value or envVar.');
  const type = patch.type ?? row.type;
  if (patch.type !== undefined) checkCredentialType(patch.type);
  if (patch.envVar !== undefined && patch.allowedHosts?.length) throw invalidInput(ENV_HOSTS_REFUSED);
  // A new value from a variable takes the hosts the variable names, never those of the previous value (see ENV_HOSTS_REFUSED).
  const fromEnv = patch.envVar !== undefined ? valueFromEnv(deps, patch.envVar, type) : null;
  const allowedHosts = fromEnv
    ? fromEnv.allowedHosts
    : patch.allowedHosts === undefined
      ? row.allowedHosts
      : normalizeAllowedHosts(patch.allowedHosts);
  const withSecret = patch.value !== undefined || patch.envVar !== undefined;
  if (!withSecret && type !== row.type)
    throw invalidInput(SECRET_REQUIRED_FOR_TYPE, { details: { reason: 'secret_required', field: 'type' } });
  if (!withSecret && !sameHosts(allowedHosts, row.allowedHosts))
    throw invalidInput(SECRET_REQUIRED_FOR_HOSTS, { details: { reason: 'secret_required', field: 'allowedHosts' } });
  let value: CredentialValue | null = null;
  if (fromEnv) value = fromEnv.value;
  else if (patch.value !== undefined) value = validateValue(type, patch.value);
  if (patch.name !== undefined) {
    const name = patch.name.trim();
    const other = await idByName(em, principal.workspaceId, name);
    if (other && other !== row.id) throw conflict(`A credential named "${name}" already exists in this workspace.`);
    row.name = name;
  }
  row.type = type;
  row.allowedHosts = allowedHosts;
  if (value) {
    row.secretEncrypted = sealCredentialValue(ring, row.workspaceId, row.id, value);
    row.source = patch.envVar !== undefined ? 'env' : 'inline';
    row.envVar = patch.envVar ?? null;
  }
  row.updatedAt = new Date();
  recordAudit(em, principal, {
    action: 'credential.update',
    severity: 'info',
    workspaceId: principal.workspaceId,
    targetType: 'credential',
    targetId: row.id,
    metadata: { name: row.name, type, valueChanged: value !== null, allowedHosts },
  });
  await flushUnique(em, () => conflict(`A credential named "${row.name}" already exists in this workspace.`));
  return credentialView(row, value ?? tryOpen(ring, row), deps.providerUrls);
}

function sameHosts(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((h) => b.includes(h));
}

export async function deleteCredential(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<void> {
  const row = await loadCredential(em, principal.workspaceId, id);
  // The workspace repository reaches its pulls API with this credential (services/repository).
  if ((await em.count(WorkspaceRepositorySchema, { credentialId: row.id })) > 0) {
    throw conflict('This credential is used by the workflow repository; change or remove the repository setting first.');
  }
  recordAudit(em, principal, {
    action: 'credential.delete',
    severity: 'warning',
    workspaceId: principal.workspaceId,
    targetType: 'credential',
    targetId: row.id,
    metadata: { name: row.name, type: row.type },
  });
  em.remove(row);
  await em.flush();
}
