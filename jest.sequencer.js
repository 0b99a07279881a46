// @ts-check
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Known slow test files, slowest first (seconds at `--maxWorkers=1` on an idle 2-core machine,
 * from the clean-clone run of issue 28; update when a file's time changes much). Jest orders by
 * the durations it cached on the last run, and by file size when it has none, as in a clean
 * clone or CI: then a 2-minute file could start last and leave one worker idle for its whole
 * length. Starting these first lets the short files fill the gaps at the end.
 */
const SLOW_FIRST = [
  // (Reported as test/unit/supervisor.test.ts, now test/unit/main/supervisor.test.ts, which is 17 lines of pure checks: this is the file that starts real supervisors.)
  'test/integration/platform/supervisor.test.ts',
  'test/integration/webhooks/webhooks.test.ts',
  'test/integration/main/restart.test.ts',
  'test/integration/platform/restart.test.ts',
  'test/abuse/f6-sandbox-fairness.test.ts',
  'test/integration/platform/authorization.test.ts',
  'test/integration/auth/signInLimits.test.ts',
  'test/integration/credentials/rotation.test.ts',
  'test/integration/runs/codeIsolation.test.ts',
  'test/integration/runs/expressions.test.ts',
  'test/unit/engine/syncExpressions.test.ts',
  'test/unit/services/kernel/sandbox/sandbox.test.ts',
  'test/integration/runs/runs.test.ts',
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
