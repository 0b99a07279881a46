// The last step of `npm run build`: writes dist/temporal/workflow-bundle.js, which the compiled
// worker loads instead of bundling at start (temporal/worker.ts, prebuiltWorkflowBundle).
import { writeBuiltWorkflowBundle } from '../temporal/worker';

writeBuiltWorkflowBundle().then(
  (file) => process.stdout.write(`workflow bundle: ${file}\n`),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
