/**
 * The lint rule that keeps table access out of routes (eslint.config.js, api layer): importing
 * an entity schema into api/routes fails lint, importing a constant from the same module does not.
 */
import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../../..');
// The config is passed in rather than found: ESLint loads config files with a dynamic import, which jest's VM refuses.
// Type information is off: the linted files are imaginary (no project holds them) and these rules need none.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { configs } = require('typescript-eslint');
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  overrideConfig: [...require(path.join(root, 'eslint.config.js')), configs.disableTypeChecked],
});

async function restrictedImportMessages(code: string, file = 'api/routes/example.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

test('a route importing an entity schema fails lint with the "call a service" message', async () => {
  const messages = await restrictedImportMessages(
    `import { WorkflowSchema } from '../../db/entities';\nexport const x = WorkflowSchema;\n`,
  );
  expect(messages).toEqual([expect.stringContaining('Routes do not touch tables: call a service.')]);
});

test('a route importing entity types, or the status lists of engine/statuses.ts, passes', async () => {
  expect(await restrictedImportMessages(`import type { Workflow } from '../../db/entities';\nexport type X = Workflow;\n`)).toEqual([]);
  expect(
    await restrictedImportMessages(`import { WORKFLOW_STATUSES } from '../../engine/statuses';\nexport const x = WORKFLOW_STATUSES;\n`),
  ).toEqual([]);
});

test('services may still import entity schemas', async () => {
  const code = `import { WorkflowSchema } from '../db/entities';\nexport const x = WorkflowSchema;\n`;
  expect(await restrictedImportMessages(code, 'services/example.ts')).toEqual([]);
});
