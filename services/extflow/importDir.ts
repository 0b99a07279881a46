/**
 * `bundlePath`: a bundle read from the server's import directory, never from elsewhere. The
 * path must be relative, without `..` segments; after resolving symbolic links (the path's and,
 * for a directory, every entry's) it must still lie inside the directory. A file holds a bundle
 * or one workflow; a directory's `*.json` files (what `export:workflow --separate` writes) are
 * read in name order, each a workflow or an array of them.
 */
import { lstat, readFile, readdir, realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { invalidInput } from '../kernel/errors';
import { MAX_EXTFLOW_BUNDLE_WORKFLOWS } from './bundle';

/** The largest bundle file (and the largest total of a directory's files). */
export const MAX_BUNDLE_FILE_BYTES = 5 * 1024 * 1024;

const OUTSIDE = 'bundlePath must stay inside the import directory.';

function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function realInside(root: string, p: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw invalidInput('bundlePath does not exist in the import directory.');
    throw invalidInput('bundlePath cannot be read.');
  }
  if (!inside(root, real)) throw invalidInput(OUTSIDE);
  return real;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidInput(`${what} is not valid JSON.`);
  }
}

/**
 * Reads a bundle from the import directory: the parsed value (a file), or `{ name, workflows }`
 * (a directory) with `sources`, the file each workflow came from (`a.json`, or `a.json[1]` for
 * the second workflow of a file holding an array).
 */
export async function readBundlePath(importDir: string | undefined, bundlePath: string): Promise<{ value: unknown; sources?: string[] }> {
  if (!importDir) throw invalidInput('Reading bundles from a path is not configured on this server; send importBundleJson instead.');
  if (
    bundlePath.trim() === '' ||
    bundlePath.includes('\0') ||
    isAbsolute(bundlePath) ||
    /^[A-Za-z]:/.test(bundlePath) ||
    bundlePath.split(/[\\/]+/).includes('..')
  ) {
    throw invalidInput('bundlePath must be a relative path inside the import directory, without "..".');
  }
  let root: string;
  try {
    root = await realpath(importDir);
  } catch {
    throw invalidInput('The import directory is not available on this server.');
  }
  const target = resolve(root, bundlePath);
  if (!inside(root, target)) throw invalidInput(OUTSIDE);
  const real = await realInside(root, target);
  const info = await stat(real);
  if (info.isFile()) {
    if (info.size > MAX_BUNDLE_FILE_BYTES) throw invalidInput(`The bundle file is larger than ${MAX_BUNDLE_FILE_BYTES} bytes.`);
    return { value: parseJson(await readFile(real, 'utf8'), 'The bundle file') };
  }
  if (!info.isDirectory()) throw invalidInput('bundlePath is neither a file nor a directory.');
  const names = (await readdir(real)).filter((n) => n.toLowerCase().endsWith('.json')).sort();
  if (names.length === 0) throw invalidInput('The bundle directory holds no .json files.');
  if (names.length > MAX_EXTFLOW_BUNDLE_WORKFLOWS)
    throw invalidInput(`The bundle directory holds more than ${MAX_EXTFLOW_BUNDLE_WORKFLOWS} .json files.`);
  const workflows: unknown[] = [];
  const sources: string[] = [];
  let total = 0;
  for (const name of names) {
    const entry = join(real, name);
    const link = await lstat(entry);
    const file = link.isSymbolicLink() ? await realInside(root, entry) : entry;
    const fileInfo = await stat(file);
    if (!fileInfo.isFile()) continue;
    total += fileInfo.size;
    if (total > MAX_BUNDLE_FILE_BYTES)
      throw invalidInput(`The bundle directory's files are larger than ${MAX_BUNDLE_FILE_BYTES} bytes together.`);
    const value = parseJson(await readFile(file, 'utf8'), `${name}`);
    if (Array.isArray(value)) {
      workflows.push(...value);
      sources.push(...value.map((_, i) => `${name}[${i}]`));
    } else {
      workflows.push(value);
      sources.push(name);
    }
  }
  return { value: { name: basename(real), workflows }, sources };
}
