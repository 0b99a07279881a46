/**
 * The credentials area: types and their schemas (types.ts), keys and encryption (keys.ts),
 * masks and redaction (mask.ts), where a credential may be sent (destinations.ts), CRUD (crud.ts), use on HTTP requests with OAuth2 refresh
 * (http.ts), connection tests (checks.ts, imap.ts, testing.ts), workflow references and
 * bootstrap from the environment (workflows.ts), key rotation (rotation.ts).
 */
export {
  CREDENTIAL_TYPE_NAMES,
  CREDENTIAL_TYPES,
  type CredentialFamily,
  type CredentialValue,
  HTTP_CREDENTIAL_TYPES,
  isLocalAiCliType,
  maskSource,
  oauthScopesOf,
  parseCredentialValue,
  PROVIDER_TYPES,
  type ProviderType,
  SECRET_FIELDS,
  secretStrings,
  type ValueProblem,
} from './types';
export {
  credentialKeyring,
  type CredentialKeySettings,
  keySettingsOf,
  openCredentialValue,
  requireKeyring,
  sealCredentialValue,
} from './keys';
export { maskSecret, redactDeep, redactSecrets } from './mask';
export {
  credentialDestinations,
  boundHostsText,
  hostAllowed,
  impliedHosts,
  MAX_ALLOWED_HOSTS,
  normalizeAllowedHosts,
  parseHostPattern,
  type ProviderUrls,
  providerUrlsOf,
  shownHost,
} from './destinations';
export {
  checkCredentialType,
  createCredential,
  CREDENTIAL_NOT_FOUND,
  type CredentialDeps,
  type CredentialInput,
  type CredentialListItem,
  type CredentialPatch,
  credentialView,
  type CredentialView,
  deleteCredential,
  ENV_HOSTS_REFUSED,
  listCredentials,
  loadCredential,
  openCredential,
  resolveCredentialReference,
  SECRET_REQUIRED_FOR_HOSTS,
  SECRET_REQUIRED_FOR_TYPE,
  updateCredential,
  validateValue,
  valueFromEnv,
} from './crud';
export {
  credentialHeaders,
  type CredentialInUse,
  CredentialRefreshError,
  type CredentialRequestOptions,
  refreshOAuth2,
  sendWithCredential,
} from './http';
export {
  checkCredential,
  type CheckOptions,
  type CredentialTestResult,
  type CredentialTestStatus,
  immediateResult,
  smtpTransport,
} from './checks';
export { type CredentialTestDeps, storeRefreshedValue, testCredential, testStoredCredential, UNREADABLE_MESSAGE } from './testing';
export {
  bootstrapCredentialReferences,
  type BootstrapOutcome,
  type BootstrapReport,
  bootstrapWorkflowCredentials,
  type CredentialReference,
  credentialReferences,
  envVarForReference,
  testWorkflowCredentials,
  type WorkflowCredentialTest,
} from './workflows';
export { rotateCredentialKeys, type RotationReport } from './rotation';
export {
  assertCredentialDestination,
  type CredentialUseDeps,
  CredentialUseError,
  type CredentialUseFailure,
  errtrackerSigningSecret,
  sendHttpWithStoredCredential,
} from './resolve';
