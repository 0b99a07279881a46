/**
 * Test hook, preloaded with NODE_OPTIONS=--require: the first Temporal worker started while the
 * marker file REJECT_WORKER_RUN_ONCE_FILE does not exist gets a `run()` that rejects after
 * REJECT_WORKER_RUN_AFTER_MS (as the SDK's does when the worker fails); it creates the marker, so
 * the worker that replaces it runs normally. Every other process is left alone.
 */
const fs = require('node:fs');
const marker = process.env.REJECT_WORKER_RUN_ONCE_FILE;
if (marker) {
  const { Worker } = require('@temporalio/worker');
  const run = Worker.prototype.run;
  Worker.prototype.run = function patchedRun() {
    const running = run.call(this);
    try {
      fs.writeFileSync(marker, String(process.pid), { flag: 'wx' });
    } catch {
      return running; // an earlier worker already failed once
    }
    const ms = Number(process.env.REJECT_WORKER_RUN_AFTER_MS || 2000);
    return Promise.race([running, new Promise((_, reject) => setTimeout(() => reject(new Error('test hook: Worker.run() rejected')), ms))]);
  };
}
