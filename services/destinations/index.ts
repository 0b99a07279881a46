/**
 * The destinations area (the API's "targets"): Production and named previews of a workflow
 * with candidate and active pointers and revisions (model.ts), the changes of
 * `POST /workflows/{id}/targets` (changes.ts, sources.ts), publication checks and the
 * read-only preview (publication.ts, preview.ts), session approvals (approvals.ts), running a
 * destination (runtime.ts), the legacy deploy on top of it (production.ts) and schedules per
 * destination (schedules.ts). Credential ids are checked through credentials.ts only.
 */
export * from './model';
export * from './changes';
export * from './approvals';
export * from './preview';
export * from './publication';
export * from './runtime';
export * from './sources';
export { credentialBelongsToWorkspace } from './credentials';
