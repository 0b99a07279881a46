/**
 * What every entity file uses: `defineEntity` with one typing fix, and the column shapes that
 * recur across areas. Each entity's fields are declared once, in its `defineEntity` properties;
 * its type is inferred from them (`export type X = InferEntity<typeof XSchema>`).
 */
import { defineEntity, p, type EntityMetadataWithProperties, type EntitySchema, type InferEntityFromProperties } from '@mikro-orm/core';

/** `T | null` where defineEntity infers `T | null | undefined` for a `.nullable()` property. */
type NullNotUndefined<T> = { [K in keyof T]: null extends T[K] ? Exclude<T[K], undefined> : T[K] };

/**
 * MikroORM's `defineEntity`, with nullable properties typed `T | null`: a row read from the
 * database holds null, never undefined, and the services' views say `T | null`.
 */
export function entity<TProperties extends Record<string, unknown>>(
  meta: EntityMetadataWithProperties<TProperties>,
): EntitySchema<NullNotUndefined<InferEntityFromProperties<TProperties>>> {
  return defineEntity(meta) as unknown as EntitySchema<NullNotUndefined<InferEntityFromProperties<TProperties>>>;
}

/** A `timestamptz` column (the type every migration gives times): `Date` in the entity. */
export const timestamptz = (fieldName: string) => p.datetime().fieldName(fieldName).columnType('timestamptz');

/**
 * For `.hidden(HIDDEN)`: hidden from serialization, as `.hidden()` is, but typed `boolean` so the
 * inferred type stays the column's. (`.hidden()` brands the type `Hidden<T>`, and the brand of
 * `string | null` is `string & Brand`: the property could no longer be set to null.)
 */
export const HIDDEN: boolean = true;
