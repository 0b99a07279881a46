/**
 * The layer rule of the README's architecture section, checked with the project's own ESLint
 * configuration: arrows point inward (engine <- db <- services <- api | temporal | activities).
 * Each case lints a one-line file placed in a layer, so the test fails if the rule is loosened.
 */
import path from 'node:path';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../..');
// The config is passed in rather than found on disk: ESLint loads config files with a dynamic
// import(), which jest's CommonJS runtime refuses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: require('../../eslint.config.js') });

async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer rule', () => {
  test.each([
    ['engine/probe.ts', "import { RunSchema } from '../db/entities';"],
    ['engine/probe.ts', "import { newId } from '../services/kernel/ids';"],
    ['db/entities/probe.ts', "import { newId } from '../../services/kernel/ids';"],
    ['db/entities/probe.ts', "import { TASK_QUEUE } from '../../temporal/shared';"],
    ['db/entities/probe.ts', "import { validateGraph } from '../../engine/validate';"],
    ['services/probe.ts', "import { createApp } from '../api/app';"],
    ['services/probe.ts', "import { TASK_QUEUE } from '../temporal/shared';"],
    ['services/probe.ts', "import { createActivities } from '../activities';"],
    ['activities/probe.ts', "import { TASK_QUEUE } from '../temporal/shared';"],
    ['temporal/probe.ts', "import { createApp } from '../api/app';"],
    ['api/routes/probe.ts', "import { temporalRunLauncher } from '../../temporal/runs-client';"],
    // main/ (process wiring: the supervisor) is the outermost layer: nothing inside imports it.
    ['services/probe.ts', "import { startSupervisor } from '../main/supervisor';"],
    ['temporal/probe.ts', "import { startSupervisor } from '../main/supervisor';"],
    ['api/routes/probe.ts', "import { startSupervisor } from '../../main/supervisor';"],
    // Tiers inside services/: the kernel and the workflows base never import the use cases above them.
    ['services/kernel/probe.ts', "import { executeWorkflow } from '../runs/execute';"],
    ['services/kernel/probe.ts', "import { loadWorkflow } from '../workflows';"],
    ['services/kernel/blobs/probe.ts', "import type { FileView } from '../../files';"],
    ['services/kernel/probe.ts', "import { TASK_QUEUE } from '../../temporal/shared';"],
    ['services/workflows/probe.ts', "import { deployWorkflow } from '../publishing';"],
  ])('%s may not %s', async (file, code) => {
    expect(await restrictedImports(file, code)).not.toHaveLength(0);
  });

  test.each([
    ['db/entities/probe.ts', "import type { WorkflowGraph } from '../../engine/types';"],
    ['services/probe.ts', "import { RunSchema } from '../db/entities';"],
    ['services/probe.ts', "import { validateGraph } from '../engine/validate';"],
    ['services/kernel/probe.ts', "import { loadConfig } from '../config';"],
    ['services/kernel/blobs/probe.ts', "import { notFound } from '../errors';"],
    ['services/workflows/probe.ts', "import { newId } from '../kernel/ids';"],
    ['services/workflows/probe.ts', "import { WorkflowSchema } from '../../db/entities';"],
    ['services/publishing/probe.ts', "import { loadWorkflow } from '../workflows';"],
    ['activities/probe.ts', "import { newId } from '../services/kernel/ids';"],
    ['temporal/probe.ts', "import type { RunLauncher } from '../services/kernel/ports';"],
    ['api/routes/probe.ts', "import { newId } from '../../services/kernel/ids';"],
    ['api/wiring.ts', "import { temporalRunLauncher } from '../temporal/runs-client';"],
    ['scripts/probe.ts', "import { startSupervisor } from '../main/supervisor';"],
    ['main/probe.ts', "import { createApp } from '../api/app';"],
  ])('%s may %s', async (file, code) => {
    expect(await restrictedImports(file, code)).toEqual([]);
  });
});

describe('the tree as it is', () => {
  const ours = ['engine', 'db', 'services', 'api', 'temporal', 'activities', 'scripts', 'test'];
  const filesUnder = (dir: string): string[] =>
    readdirSync(path.join(root, dir)).flatMap((name) => {
      const rel = path.join(dir, name);
      return statSync(path.join(root, rel)).isDirectory() ? filesUnder(rel) : rel.endsWith('.ts') ? [rel] : [];
    });

  /** Top-level folders of ours that a file imports (value or type), resolved from its relative specifiers. */
  function importedFolders(file: string): Set<string> {
    const source = readFileSync(path.join(root, file), 'utf8');
    const folders = new Set<string>();
    for (const match of source.matchAll(/from\s+'(\.{1,2}\/[^']+)'/g)) {
      const target = path.relative(root, path.resolve(path.dirname(path.join(root, file)), match[1]));
      folders.add(target.split(path.sep)[0]);
    }
    return folders;
  }

  test('engine/ imports no other folder of ours', () => {
    for (const file of filesUnder('engine')) {
      expect([file, [...importedFolders(file)].filter((f) => ours.includes(f) && f !== 'engine')]).toEqual([file, []]);
    }
  });

  test('db/ imports nothing of ours but engine types', () => {
    for (const file of filesUnder('db')) {
      expect([file, [...importedFolders(file)].filter((f) => ours.includes(f) && f !== 'db' && f !== 'engine')]).toEqual([file, []]);
    }
  });
});
