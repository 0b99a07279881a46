import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A random secret kept in `${dataDir}/${name}` (mode 600): generated on the first call, read
 * back on the next ones. `created` says whether this call made it (so it can be shown once).
 */
async function ensureLocalSecret(dataDir: string, name: string): Promise<{ value: string; created: boolean }> {
  const file = path.join(dataDir, name);
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return { value: existing, created: false };
  } catch {
    /* first run */
  }
  await mkdir(dataDir, { recursive: true });
  const value = randomBytes(32).toString('base64url');
  await writeFile(file, value + '\n', { mode: 0o600 });
  return { value, created: true };
}

/**
 * SECRET_KEY for local development: generated once into `${dataDir}/secretKey` (mode 600) and
 * reused, so webhook URLs stay valid across restarts. Production sets SECRET_KEY itself.
 */
export async function ensureLocalSecretKey(dataDir: string): Promise<string> {
  return (await ensureLocalSecret(dataDir, 'secret-key')).value;
}

/**
 * OPERATOR_TOKEN for local development, when none is configured: generated once into
 * `${dataDir}/operator-token` (mode 600), so the Temporal CLI's `--codec-auth` keeps working
 * across restarts. `created` is true on the run that made it: `npm start` prints it then only.
 */
export function ensureLocalOperatorToken(dataDir: string): Promise<{ value: string; created: boolean }> {
  return ensureLocalSecret(dataDir, 'operator-token');
}
