/**
 * The credentials area: types and their schemas (types.ts), keys and encryption (keys.ts),
 * masks and redaction (mask.ts), where a credential may be sent (destinations.ts), CRUD (crud.ts), use on HTTP requests with OAuth2 refresh
 * (http.ts), connection tests (checks.ts, imap.ts, testing.ts), workflow references and
 * bootstrap from the environment (workflows.ts), key rotation (rotation.ts).
 */
export * from './types';
export * from './keys';
export * from './mask';
export * from './destinations';
export * from './crud';
export * from './http';
export * from './checks';
export * from './testing';
export * from './workflows';
export * from './rotation';
export * from './resolve';
