// @ts-check
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

// Workflow code is replayed deterministically inside Temporal's sandbox: no Node built-ins,
// no I/O clients, no ORM. Side effects belong in activities/.
const nodeBuiltins = builtinModules.flatMap((m) => [m, `node:${m}`]);
const ioModules = [
  'pg',
  '@mikro-orm/*',
  'koa',
  '@koa/*',
  'pino',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  '**/db/**',
  '**/services/**',
  '**/api/**',
];

/** The product's folders (what runs in production), as opposed to scripts/ and test/. */
const PRODUCT_FOLDERS = ['engine', 'db', 'services', 'api', 'temporal', 'activities', 'main'];

const ours = (...folders) => folders.flatMap((f) => [`**/${f}`, `**/${f}/**`]);

const SERVICES_BANNED = ours('api', 'temporal', 'activities', 'main', 'scripts', 'test');
const SERVICES_MESSAGE = 'services/ are HTTP- and Temporal-free: reach the durable engine through services/kernel/ports.ts.';

/**
 * Heavy packages load where they are used (`lazyModule`, services/kernel/lazyModule.ts), never at
 * import time: the API and the worker import every area, and most processes never use them.
 * The list is services/kernel/lazyPackages.json, which test/unit/main/lazyPackages.test.ts also
 * reads to check that loading the two processes loads none of them.
 * @type {string[]}
 */
const LAZY_PACKAGES = require('./services/kernel/lazyPackages.json').flatMap((name) => [name, `${name}/**`]);
const LAZY_MESSAGE =
  'A heavy package: load it where it is used, with lazyModule(() => import(…)) (services/kernel/lazyModule.ts); `import type` is fine.';

/**
 * One `no-restricted-imports` block per layer, listing the folders of ours it must not import.
 * `typeOnly` folders may still be imported with `import type`; `extra` adds patterns of one layer.
 */
const LAYERS = [
  {
    files: ['engine/**/*.ts'],
    banned: ours('db', 'services', 'api', 'temporal', 'activities', 'main', 'scripts', 'test'),
    message: 'engine/ is pure: it imports nothing of ours.',
  },
  // The one exception: db/wellFormedTypes.ts applies engine/wellFormedText.ts's pure rule to every column.
  {
    files: ['db/**/*.ts'],
    banned: ours('services', 'api', 'temporal', 'activities', 'main', 'scripts', 'test'),
    typeOnly: ['**/engine/**', '!**/engine/wellFormedText'],
    message: 'db/ is entities and migrations: it may import engine types only (and the well-formed text rule).',
  },
  { files: ['services/**/*.ts'], banned: SERVICES_BANNED, message: SERVICES_MESSAGE },
  // Tiers inside services/ (test/unit/serviceTiers.test.ts checks the whole graph, cycles included):
  // the kernel and the workflows base import only the kernel, never the
  // use cases above them. `depth` is how many folders below services/ the file lies.
  ...[1, 2, 3].map((depth) => ({
    files: [`services/kernel/${'*/'.repeat(depth - 1)}*.ts`, `services/workflows/${'*/'.repeat(depth - 1)}*.ts`],
    banned: SERVICES_BANNED,
    message: SERVICES_MESSAGE,
    extra: [
      {
        regex: `^${'\\.\\./'.repeat(depth)}(?!\\.\\./|kernel(/|$))`,
        message: 'services/kernel/ and services/workflows/ (the base) import only the kernel: use cases sit on top of them, not below.',
      },
    ],
  })),
  // api/, temporal/ and activities/ sit on one floor above services/: none imports another; main/ wires them.
  {
    files: ['activities/**/*.ts'],
    banned: ours('api', 'temporal', 'main', 'scripts', 'test'),
    message: 'activities/ are thin adapters over services/.',
  },
  // Workflow code (temporal/workflows) imports activity types only: its own block below allows `import type`.
  {
    files: ['temporal/**/*.ts'],
    ignores: ['temporal/workflows/**'],
    banned: ours('api', 'activities', 'main', 'scripts', 'test'),
    message:
      'temporal/ implements the ports of services/; it imports neither the HTTP edge nor activities/ (main/worker.ts hands the activities to the worker).',
  },
  {
    files: ['api/**/*.ts'],
    banned: ours('temporal', 'activities', 'main', 'scripts', 'test'),
    message: 'api/ reaches Temporal through services/kernel/ports.ts; the adapters are wired in main/.',
    // Entity schemas are how code reaches tables; entity types stay importable (status lists are in engine/statuses.ts).
    extra: [
      {
        group: ['**/db/entities', '**/db/entities/**'],
        importNamePattern: '^[A-Z]\\w*Schema$',
        message: 'Routes do not touch tables: call a service.',
      },
    ],
  },
];

function layerRules() {
  return LAYERS.map(({ files, ignores, banned, typeOnly, message, extra }) => ({
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: banned, message },
            ...(typeOnly ? [{ group: typeOnly, allowTypeImports: true, message }] : []),
            ...(extra ?? []),
            { group: LAZY_PACKAGES, allowTypeImports: true, message: LAZY_MESSAGE },
          ],
        },
      ],
    },
  }));
}

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
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Type-checked rules on product code (not scripts/ or test/, to keep `npx eslint .` short on
  // two cores). An intentional floating promise is written `void p;` with a comment saying why.
  {
    files: PRODUCT_FOLDERS.map((f) => `${f}/**/*.ts`),
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: __dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  // Layers: arrows point inward. engine <- db <- services <- (api | temporal | activities) <- main.
  // main/ (entry points, wiring, service factories, the supervisor), scripts/ and test/ are composition roots and may import anything.
  ...layerRules(),
  {
    files: ['temporal/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            allowTypeImports: true,
            message: 'Workflow code must be deterministic: no Node built-ins (use an activity).',
          })),
          patterns: [
            {
              group: ioModules,
              allowTypeImports: true,
              message: 'Workflow code must not do I/O: import activity types only and call them through proxyActivities.',
            },
            {
              group: ours('activities'),
              allowTypeImports: true,
              message: 'Workflows import activity types only (proxyActivities<ReturnType<typeof createActivities>>).',
            },
            {
              group: ours('api', 'main', 'scripts', 'test'),
              message: 'temporal/ implements the ports of services/; it never imports the HTTP edge or the composition roots.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'fetch', message: 'No I/O in workflows: use an activity.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
