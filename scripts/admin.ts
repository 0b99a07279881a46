/**
 * Operator commands. Contract (scripts depend on it):
 *   npm run --silent admin -- create-workspace --name NAME --owner-email EMAIL --owner-password PW --json
 * prints one JSON line { workspace: { id, name }, user: { id, email }, apiKey: { id, name, scope, token } }.
 *   npm run --silent admin -- rotate-credentials-key [--batch-size N] [--json]
 * re-encrypts every credential under CREDENTIALS_KEY (older keys in CREDENTIALS_PREVIOUS_KEYS
 * still decrypt) and prints { keyId, scanned, rotated, alreadyCurrent, failed: [{ id, reason }] };
 * exit code 1 when any row failed.
 * Reads the same configuration as `npm start`. Errors go to stderr with exit code 1.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { migrateUp, openOrm } from '../db/orm';
import { provisionWorkspace } from '../services/accounts/bootstrap';
import { loadConfig } from '../services/kernel/config';
import { credentialKeyring, keySettingsOf, rotateCredentialKeys } from '../services/credentials';
import { ensurePostgres } from './lib/postgres';

const USAGE = [
  'usage: admin create-workspace --name NAME --owner-email EMAIL --owner-password PW [--json]',
  '       admin rotate-credentials-key [--batch-size N] [--json]',
].join('\n');

async function createWorkspace(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      'owner-password': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.name || !values['owner-email'] || !values['owner-password']) throw new Error(USAGE);

  const config = loadConfig();
  const pg = await ensurePostgres({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const orm = await openOrm(pg.url);
  try {
    await migrateUp(orm);
    const result = await provisionWorkspace(orm.em.fork(), {
      name: values.name,
      ownerEmail: values['owner-email'],
      ownerPassword: values['owner-password'],
    });
    if (values.json) {
      process.stdout.write(JSON.stringify(result) + '\n');
    } else {
      process.stdout.write(
        `workspace ${result.workspace.name} (${result.workspace.id})\nowner     ${result.user.email} (${result.user.id})\nAPI key   ${result.apiKey.token}  (shown once)\n`,
      );
    }
  } finally {
    await orm.close();
    await pg.stop();
  }
}

/**
 * Re-encrypts every credential under the current key while the service runs (see
 * services/credentials/rotation.ts for the rollout). Prints counts and failed ids, never values.
 */
async function rotateCredentialsKey(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { 'batch-size': { type: 'string', default: '100' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
  const batchSize = Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
    throw new Error('--batch-size must be an integer from 1 to 10000');
  const loaded = loadConfig();
  // Like `npm start`: without SECRET_KEY, the local one of the data directory (when there is one).
  const config = {
    ...loaded,
    secretKey:
      loaded.secretKey ??
      (await readFile(path.join(loaded.dataDir, 'secret-key'), 'utf8').then(
        (k) => k.trim() || undefined,
        () => undefined,
      )),
  };
  const ring = credentialKeyring(keySettingsOf(config));
  if (!ring) throw new Error('Neither CREDENTIALS_KEY nor SECRET_KEY is configured: there is no key to encrypt with.');
  const pg = await ensurePostgres({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const orm = await openOrm(pg.url);
  try {
    await migrateUp(orm);
    const report = await rotateCredentialKeys(orm.em.fork(), ring, { batchSize });
    if (values.json) process.stdout.write(JSON.stringify(report) + '\n');
    else {
      process.stdout.write(
        `key ${report.keyId}: ${report.rotated} re-encrypted, ${report.alreadyCurrent} already current, ${report.failed.length} failed (of ${report.scanned})\n`,
      );
      for (const f of report.failed) process.stdout.write(`  failed ${f.id}: ${f.reason}\n`);
    }
    if (report.failed.length > 0) process.exitCode = 1;
  } finally {
    await orm.close();
    await pg.stop();
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'create-workspace') return createWorkspace(rest);
  if (command === 'rotate-credentials-key') return rotateCredentialsKey(rest);
  throw new Error(USAGE);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
