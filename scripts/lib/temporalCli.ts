import { spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Temporal CLI release that we build when no binary is available.
 * v1.5.1 is pinned because later tags carry `replace` directives in go.mod,
 * which makes `go install module@version` refuse to build them.
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';

const MODULE = 'github.com/temporalio/cli/cmd/temporal';

const NO_GO_HELP =
  'Cannot build the Temporal CLI: `go` is not on PATH.\n' +
  'Get the CLI without Go, then point TEMPORAL_CLI_PATH at it:\n' +
  '  - download a release archive from https://github.com/temporalio/cli/releases and unpack it, or\n' +
  '  - brew install temporal\n' +
  '  then: export TEMPORAL_CLI_PATH=/absolute/path/to/temporal';

/** Folder that holds cached CLI builds (one sub-folder per version). */
export function temporalCliCacheDir(): string {
  return process.env.TEMPORAL_CLI_CACHE || path.join(os.homedir(), '.cache', 'svc-temporal');
}

/**
 * Returns the absolute path of a `temporal` binary, building one if needed.
 *
 * Lookup order: `TEMPORAL_CLI_PATH`, then `temporal` on PATH, then the cached
 * build at `${TEMPORAL_CLI_CACHE || ~/.cache/svc-temporal}/v1.5.1/temporal`,
 * and finally `go install ...@v1.5.1` into that cache folder.
 *
 * Caveats:
 * - A `temporal` found on PATH is used whatever its version; only the cached
 *   build is pinned to {@link TEMPORAL_CLI_VERSION}.
 * - If `TEMPORAL_CLI_PATH` is set but does not point to an executable file,
 *   this throws instead of silently using another binary.
 * - The build takes several minutes and ~1 GB of Go module/build cache on a
 *   2-core machine, and needs the Go module proxy to be reachable.
 * - Two processes building at once both run `go install`; the result is the
 *   same binary, so this is wasteful but not harmful.
 * - Throws an Error with download instructions when `go` is not installed.
 */
export async function ensureTemporalCli(opts: { log?: (msg: string) => void } = {}): Promise<string> {
  const log = opts.log ?? (() => {});

  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    const resolved = path.resolve(fromEnv);
    if (await isExecutableFile(resolved)) return resolved;
    throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable file`);
  }

  const onPath = await findOnPath('temporal');
  if (onPath) return onPath;

  const binDir = path.join(temporalCliCacheDir(), TEMPORAL_CLI_VERSION);
  const cached = path.join(binDir, 'temporal');
  if (await isExecutableFile(cached)) return cached;

  const go = await findOnPath('go');
  if (!go) throw new Error(NO_GO_HELP);

  await mkdir(binDir, { recursive: true });
  log(`Building Temporal CLI ${TEMPORAL_CLI_VERSION} into ${binDir} (takes a few minutes the first time)...`);
  await runGoInstall(go, binDir, log);

  if (!(await isExecutableFile(cached))) {
    throw new Error(`go install finished but ${cached} is missing or not executable`);
  }
  log(`Temporal CLI ready: ${cached}`);
  return cached;
}

function runGoInstall(go: string, binDir: string, log: (msg: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(go, ['install', `${MODULE}@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: binDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-4000);
      for (const line of text.split('\n')) if (line.trim()) log(`[go] ${line.trim()}`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    // Compiling prints nothing for minutes; a heartbeat shows it is not stuck.
    const heartbeat = setInterval(() => {
      log(`[go] still building (${Math.round((Date.now() - started) / 1000)} s)...`);
    }, 30_000);
    heartbeat.unref();
    child.on('error', (err) => {
      clearInterval(heartbeat);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      if (code === 0) resolve();
      else reject(new Error(`go install ${MODULE}@${TEMPORAL_CLI_VERSION} failed (${signal ?? `exit ${code}`}):\n${tail}`));
    });
  });
}

/** True when `file` is a regular file this process may execute. */
export async function isExecutableFile(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

async function findOnPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
