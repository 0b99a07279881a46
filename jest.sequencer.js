// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Known slow test files, slowest first. Jest orders by the durations it cached on the last run,
 * and by file size when it has none, as in a clean clone or CI: then a 4-minute file could start
 * last and leave one worker idle for its whole length. Starting these first lets the short files
 * fill the gaps at the end. Order from per-file times at `--maxWorkers=1` (issue 28, item 5: a
 * loaded 2-core machine, so only the order means anything); update when a file's time changes much.
 */
const SLOW_FIRST = [
  // Real `npm start` supervisors and restarts: mostly waiting for processes to start.
  'test/integration/platform/supervisor.test.ts',
  'test/integration/platform/restart.test.ts',
  'test/abuse/f6SandboxFairness.test.ts',
  'test/integration/runs/runs.test.ts',
  'test/integration/destinations/actions.test.ts',
  'test/unit/services/kernel/sandbox/sandbox.test.ts',
  'test/abuse/f1FailureText.test.ts',
  'test/integration/commands/crash.test.ts',
  'test/integration/webhooks/webhooks.test.ts',
  'test/abuse/uploads.test.ts',
  'test/integration/sources/pollCrash.test.ts',
  'test/integration/runs/codeIsolation.test.ts',
  'test/integration/runs/expressions.test.ts',
  'test/integration/platform/authorization.test.ts',
  'test/integration/extflow/corpus.test.ts',
  'test/unit/engine/syncExpressions.test.ts',
  'test/integration/credentials/rotation.test.ts',
  // Found long in a clean-clone CI beside a benchmark (2026-11-28, load average 12–18).
  'test/integration/runs/expressionBounds.test.ts',
  'test/abuse/f4LiveExpressions.test.ts',
  'test/integration/runs/wellFormedText.property.test.ts',
  'test/abuse/f8DryRunText.test.ts',
  'test/integration/research/researchCrash.test.ts',
  'test/abuse/webhookFlood.test.ts',
  'test/abuse/f7SandboxMemory.test.ts',
];

class SlowFirstSequencer extends Sequencer {
  /** @param {import('@jest/test-result').Test[]} tests */
  sort(tests) {
    // Jest's own order (cached durations, failures first, else size) for the rest.
    const sorted = /** @type {import('@jest/test-result').Test[]} */ (super.sort(tests));
    const rank = (/** @type {import('@jest/test-result').Test} */ t) => {
      const i = SLOW_FIRST.findIndex((p) => t.path.endsWith(p));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    return sorted
      .map((test, index) => ({ test, index, rank: rank(test) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map(({ test }) => test);
  }
}

module.exports = SlowFirstSequencer;
