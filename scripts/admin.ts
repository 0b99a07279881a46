/**
 * Operator commands. Contract (scripts depend on it):
 *   npm run --silent admin -- create-workspace --name NAME --owner-email EMAIL --owner-password PW --json
 * prints one JSON line { workspace: { id, name }, user: { id, email }, apiKey: { id, name, scope, token } }.
 * Reads the same configuration as `npm start`. Errors go to stderr with exit code 1.
 */
import { parseArgs } from 'node:util';
import { migrateUp, openOrm } from '../db/orm';
import { provisionWorkspace } from '../services/bootstrap';
import { loadConfig } from '../services/config';
import { ensurePostgres } from './lib/postgres';

const USAGE = 'usage: admin create-workspace --name NAME --owner-email EMAIL --owner-password PW [--json]';

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

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'create-workspace') return createWorkspace(rest);
  throw new Error(USAGE);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
