import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isExecutableFile } from './temporalCli';

/**
 * The Node.js release the production image runs (Dockerfile) and CI tests beside the machine's
 * own Node. Node 26 became LTS on 2026-10-28; keep this, the Dockerfile's `FROM` lines and the
 * README's supported range in step.
 */
export const NODE_LTS_VERSION = '26.12.1';

/** Folder that holds cached Node.js binaries (one sub-folder per version). */
export function nodeLtsCacheDir(): string {
  return process.env.NODE_LTS_CACHE || path.join(os.homedir(), '.cache', 'svc-node');
}

/**
 * Returns the absolute path of a `node` binary of {@link NODE_LTS_VERSION}, fetching it first if
 * needed.
 *
 * The npm registry serves the official Node.js binaries as `node-<platform>-<arch>` packages (no
 * install script: the binary is the package), so this needs only the registry npm already uses.
 *
 * Caveats:
 * - `NODE_LTS_PATH` overrides the lookup; if it does not name an executable this throws rather
 *   than silently testing on another Node.
 * - Only the platforms the official packages exist for work (linux/darwin, x64/arm64).
 * - Two processes fetching at once both run npm into the same folder; the result is the same.
 */
export async function ensureNodeLts(opts: { log?: (msg: string) => void } = {}): Promise<string> {
  const log = opts.log ?? (() => {});

  const fromEnv = process.env.NODE_LTS_PATH;
  if (fromEnv) {
    const resolved = path.resolve(fromEnv);
    if (await isExecutableFile(resolved)) return resolved;
    throw new Error(`NODE_LTS_PATH=${fromEnv} is not an executable file`);
  }

  const pkg = `node-${process.platform}-${process.arch}`;
  const prefix = path.join(nodeLtsCacheDir(), NODE_LTS_VERSION);
  const binary = path.join(prefix, 'node_modules', pkg, 'bin', 'node');
  if (await isExecutableFile(binary)) return binary;

  await mkdir(prefix, { recursive: true });
  log(`Fetching Node.js ${NODE_LTS_VERSION} (${pkg}) into ${prefix}...`);
  await run('npm', [
    'install',
    '--prefix',
    prefix,
    '--no-save',
    '--no-package-lock',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    `${pkg}@${NODE_LTS_VERSION}`,
  ]);
  if (!(await isExecutableFile(binary))) throw new Error(`npm installed ${pkg} but ${binary} is missing`);
  log(`Node.js ${NODE_LTS_VERSION} ready: ${binary}`);
  return binary;
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let tail = '';
    child.stderr.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${tail}`));
    });
  });
}
