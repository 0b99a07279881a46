/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  // Known slow files first, so a clean clone (no cached durations) does not end on a 2-minute file.
  testSequencer: '<rootDir>/jest.sequencer.js',
  // Real Temporal and PostgreSQL: allow for slow 2-core machines, never for flaky timing asserts.
  testTimeout: 60_000,
};
