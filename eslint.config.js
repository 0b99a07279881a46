// @ts-check
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

// Workflow code is replayed deterministically inside Temporal's sandbox: no Node built-ins,
// no I/O clients, no ORM. Side effects belong in activities/.
const nodeBuiltins = builtinModules.flatMap((m) => [m, `node:${m}`]);
const ioModules = ['pg', '@mikro-orm/*', 'koa', '@koa/*', 'pino', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', '**/db/**', '**/services/**', '**/api/**'];

module.exports = tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', 'coverage/**', 'bench-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['temporal/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, allowTypeImports: true, message: 'Workflow code must be deterministic: no Node built-ins (use an activity).' })),
          patterns: [{ group: ioModules, allowTypeImports: true, message: 'Workflow code must not do I/O: import activity types only and call them through proxyActivities.' }],
        },
      ],
      'no-restricted-globals': ['error', { name: 'fetch', message: 'No I/O in workflows: use an activity.' }, { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
