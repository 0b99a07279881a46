/** The test kit: see test/README.md. */
export * from './client';
export * from './graphs';
export * from './stack';
export * from './workflows';
export * from './tracked';
export {
  addUserWithKey,
  createWorkspace,
  eventually,
  signInCookie,
  type TestApp,
  type TestWorker,
  type WorkspaceFixture,
} from '../support/harness';
