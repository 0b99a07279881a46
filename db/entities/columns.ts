/**
 * What every entity file uses: `defineEntity` with one typing fix, and the column shapes and
 * column groups that recur across areas. Each entity's fields are declared once, in its
 * `entity(name, tableName, properties)`, where a recurring group is spread in
 * (`...workspaceScoped()`, `...timestamps()`) at the place its columns take; the entity's type
 * is inferred from them (`export type X = InferEntity<typeof XSchema>`). The groups that point
 * at a table live with its entity (`workspaceOwned()` in workspaces.ts), so that this file
 * imports no entity.
 */
import { defineEntity, p, type EntitySchema, type InferEntityFromProperties } from '@mikro-orm/core';

/** `T | null` where defineEntity infers `T | null | undefined` for a `.nullable()` property. */
type NullNotUndefined<T> = { [K in keyof T]: null extends T[K] ? Exclude<T[K], undefined> : T[K] };

/**
 * An entity (its class name, its table and its properties) made with MikroORM's `defineEntity`,
 * nullable properties typed `T | null`: a row read from the database holds null, never
 * undefined, and the services' views say `T | null`. Our entities need no other option (indexes
 * and constraints are the migrations' business).
 */
export function entity<TProperties extends Record<string, unknown>>(
  name: string,
  tableName: string,
  properties: TProperties,
): EntitySchema<NullNotUndefined<InferEntityFromProperties<TProperties>>> {
  return defineEntity({ name, tableName, properties }) as unknown as EntitySchema<NullNotUndefined<InferEntityFromProperties<TProperties>>>;
}

/** A `timestamptz` column (the type every migration gives times): `Date` in the entity. */
export const timestamptz = (fieldName: string) => p.datetime().fieldName(fieldName).columnType('timestamptz');

/**
 * A many-to-one relation stored as its own column (`fieldName`) and typed as the target's key:
 * the entity holds the id, and the ORM knows the foreign key. (Without `fieldName` the naming
 * strategy would call the column of `runId` `run_id_id`.)
 */
export const references = <Target extends Parameters<typeof p.manyToOne>[0]>(target: Target, fieldName: string) =>
  p.manyToOne(target).fieldName(fieldName).mapToPk();

/**
 * The key of most tables: a string id, and the workspace the row belongs to as a plain column
 * (the ORM models no relation; `workspaceOwned()` in workspaces.ts is the one that does).
 */
export const workspaceScoped = () => ({
  id: p.string().primary(),
  workspaceId: p.string(),
});

/** When the row was created and last changed. */
export const timestamps = () => ({
  createdAt: timestamptz('created_at'),
  updatedAt: timestamptz('updated_at'),
});

/** When the row was created, for the tables that keep no `updated_at`. */
export const createdAt = () => ({
  createdAt: timestamptz('created_at'),
});

/** When a piece of durable work (a run, a step, a sync) started and finished; null until it does. */
export const executionSpan = () => ({
  startedAt: timestamptz('started_at').nullable(),
  finishedAt: timestamptz('finished_at').nullable(),
});

/**
 * For `.hidden(HIDDEN)`: hidden from serialization, as `.hidden()` is, but typed `boolean` so the
 * inferred type stays the column's. (`.hidden()` brands the type `Hidden<T>`, and the brand of
 * `string | null` is `string & Brand`: the property could no longer be set to null.)
 */
export const HIDDEN: boolean = true;
