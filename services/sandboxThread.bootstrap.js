// Starts a sandbox thread from TypeScript sources (npm start under tsx, jest under ts-jest):
// a worker thread does not inherit jest's transform, so tsx's CommonJS hook compiles the
// .ts entry here. The compiled build (dist/) starts services/sandboxThread.js directly.
const { workerData } = require('node:worker_threads');
require('tsx/cjs/api').register();
require(workerData.entry);
