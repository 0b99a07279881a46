import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * SECRET_KEY for local development: generated once into `${dataDir}/secret-key` (mode 600) and
 * reused, so webhook URLs stay valid across restarts. Production sets SECRET_KEY itself.
 */
export async function ensureLocalSecretKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'secret-key');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return existing;
  } catch {
    /* first run */
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  await writeFile(file, key + '\n', { mode: 0o600 });
  return key;
}
