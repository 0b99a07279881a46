// Starts a sandbox host process or one of its threads from TypeScript sources (npm start under
// tsx, jest under ts-jest): neither a forked process nor a worker thread inherits jest's
// transform, so tsx's CommonJS hook compiles the .ts entry here (a thread names it in
// workerData.entry, a process as its first argument). The compiled build (dist/) starts the
// .js entries directly.
const { workerData, isMainThread } = require('node:worker_threads');
require('tsx/cjs/api').register();
require(isMainThread ? process.argv[2] : workerData.entry);
