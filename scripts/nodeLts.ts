// Prints the path of the LTS `node` binary CI tests on, fetching it first if needed.
// Progress goes to stderr so that `$(tsx scripts/nodeLts.ts)` captures only the path.
import { ensureNodeLts } from './lib/nodeLts';

ensureNodeLts({ log: (msg) => process.stderr.write(`${msg}\n`) }).then(
  (binary) => process.stdout.write(`${binary}\n`),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
