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
// Type information is off: the probes are imaginary files (no project holds them) and the layer rules need none.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { configs } = require('typescript-eslint');
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  overrideConfig: [...require('../../eslint.config.js'), configs.disableTypeChecked],
});

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
    ['api/routes/probe.ts', "import { temporalRunLauncher } from '../../temporal/runsClient';"],
    // api/, temporal/ and activities/ sit on one floor: none imports another, and no api file is an exception.
    ['api/wiring.ts', "import { temporalRunLauncher } from '../temporal/runsClient';"],
    ['api/main.ts', "import { connectTemporalClient } from '../temporal/client';"],
    ['api/routes/probe.ts', "import { createActivities } from '../../activities';"],
    ['api/routes/probe.ts', "import type { ActivityDeps } from '../../activities';"],
    ['activities/probe.ts', "import { createApp } from '../api/app';"],
    ['temporal/probe.ts', "import { createActivities } from '../activities';"],
    ['temporal/probe.ts', "import type { ActivityDeps } from '../activities';"],
    // Workflows import activity types only, and never a composition root.
    ['temporal/workflows/probe.ts', "import { createActivities } from '../../activities';"],
    ['temporal/workflows/probe.ts', "import { createServices } from '../../main/services';"],
    ['temporal/workflows/probe.ts', "import { createApp } from '../../api/app';"],
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
    ['services/kernel/probe.ts', "import { loadConfig } from './config';"],
    ['services/kernel/blobs/probe.ts', "import { notFound } from '../errors';"],
    ['services/workflows/probe.ts', "import { newId } from '../kernel/ids';"],
    ['services/workflows/probe.ts', "import { WorkflowSchema } from '../../db/entities';"],
    ['services/publishing/probe.ts', "import { loadWorkflow } from '../workflows';"],
    ['activities/probe.ts', "import { newId } from '../services/kernel/ids';"],
    ['temporal/probe.ts', "import type { RunLauncher } from '../services/kernel/ports';"],
    ['api/routes/probe.ts', "import { newId } from '../../services/kernel/ids';"],
    ['temporal/workflows/probe.ts', "import type { createActivities } from '../../activities';"],
    ['main/probe.ts', "import { temporalRunLauncher } from '../temporal/runsClient';"],
    ['main/probe.ts', "import { createActivities } from '../activities';"],
    ['scripts/probe.ts', "import { startSupervisor } from '../main/supervisor';"],
    ['main/probe.ts', "import { createApp } from '../api/app';"],
  ])('%s may %s', async (file, code) => {
    expect(await restrictedImports(file, code)).toEqual([]);
  });
});

describe('the tree as it is', () => {
  const ours = ['engine', 'db', 'services', 'api', 'temporal', 'activities', 'main', 'scripts', 'test'];
  const filesUnder = (dir: string): string[] =>
    readdirSync(path.join(root, dir)).flatMap((name) => {
      const rel = path.join(dir, name);
      return statSync(path.join(root, rel)).isDirectory() ? filesUnder(rel) : rel.endsWith('.ts') ? [rel] : [];
    });

  /** Top-level folders of ours that a file imports (value or type, or value only), resolved from its relative specifiers. */
  function importedFolders(file: string, opts: { valuesOnly?: boolean } = {}): Set<string> {
    const source = readFileSync(path.join(root, file), 'utf8');
    const folders = new Set<string>();
    for (const match of source.matchAll(/^(?:import|export)(\s+type\b)?[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)) {
      if (opts.valuesOnly && match[1]) continue;
      const target = path.relative(root, path.resolve(path.dirname(path.join(root, file)), match[2]));
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

  test('api/, temporal/ and activities/ import none of each other (workflows: activity types only)', () => {
    const floor = ['api', 'temporal', 'activities'];
    for (const layer of floor) {
      for (const file of filesUnder(layer)) {
        const workflow = file.startsWith(path.join('temporal', 'workflows'));
        const all = [...importedFolders(file)].filter((f) => floor.includes(f) && f !== layer && !(workflow && f === 'activities'));
        const values = workflow ? [...importedFolders(file, { valuesOnly: true })].filter((f) => floor.includes(f) && f !== layer) : [];
        expect([file, [...new Set([...all, ...values])]]).toEqual([file, []]);
      }
    }
  });

  test('nothing but main/, scripts/ and test/ imports main/', () => {
    for (const layer of ['engine', 'db', 'services', 'api', 'temporal', 'activities']) {
      for (const file of filesUnder(layer)) expect([file, importedFolders(file).has('main')]).toEqual([file, false]);
    }
  });
});
