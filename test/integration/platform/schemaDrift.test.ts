/**
 * Entities and migrations describe the same tables: on a fresh database migrated with the
 * committed migrations, MikroORM's schema generator finds no table, column or nullability that
 * the entities declare and the migrations did not make (or the reverse).
 *
 * What it does not compare, and why: the migrations are hand-written SQL and say more than the
 * entities do (check constraints, partial and expression indexes, `text` where an entity says
 * `p.string()`, jsonb defaults, foreign keys the entities model as plain ids, tables that only raw
 * SQL reads), so the generator's full diff is never empty; those statements (alter column type,
 * defaults, constraints, indexes, drop table) are left out here. A change to an entity field's
 * name, column, nullability or table, or a new field without its migration, fails this test.
 */
// Not on the kit: it needs a database of its own and no app, worker or workspace (useTestStack() starts all three).
import { randomBytes } from 'node:crypto';
import { p } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { entity } from '../../../db/entities/columns';
import { migrateUp, openOrm, ormOptions } from '../../../db/orm';
import { testEnv } from '../../support/env';

/** The statements of a schema diff that mean entities and migrations disagree on a table or column. */
const DRIFT = [/^create table /i, / add column /i, / drop column /i, / (set|drop) not null/i];

function driftOf(diffSql: string): string[] {
  return diffSql
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => DRIFT.some((re) => re.test(s)));
}

const base = new URL(testEnv('databaseUrl'));
const database = `${base.pathname.slice(1)}_drift_${randomBytes(4).toString('hex')}`;
const url = Object.assign(new URL(base), { pathname: `/${database}` }).toString();
let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`create database ${database}`);
  const orm = await openOrm(url);
  try {
    await migrateUp(orm);
  } finally {
    await orm.close();
  }
}, 120_000);

afterAll(async () => {
  await admin?.query(`drop database if exists ${database} with (force)`);
  await admin?.end();
});

test('the entities match the migrated tables: no table, column or nullability to change', async () => {
  const orm = await openOrm(url);
  try {
    expect(driftOf(await orm.schema.getUpdateSchemaSQL({ wrap: false }))).toEqual([]);
  } finally {
    await orm.close();
  }
});

test('an entity without its migration is reported', async () => {
  const probe = entity('DriftProbe', 'drift_probe', { id: p.string().primary(), note: p.text().nullable() });
  const options = ormOptions(url);
  const orm = await MikroORM.init({ ...options, entities: [...(options.entities ?? []), probe] });
  try {
    expect(driftOf(await orm.schema.getUpdateSchemaSQL({ wrap: false }))).toEqual([expect.stringMatching(/^create table "drift_probe"/)]);
  } finally {
    await orm.close();
  }
});
