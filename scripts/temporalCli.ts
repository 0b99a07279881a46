// Prints the path of a usable `temporal` binary, building it first if needed.
// Progress goes to stderr so that `$(tsx scripts/temporalCli.ts)` captures only the path.
import { ensureTemporalCli } from './lib/temporalCli';

ensureTemporalCli({ log: (msg) => process.stderr.write(`${msg}\n`) }).then(
  (binary) => process.stdout.write(`${binary}\n`),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
