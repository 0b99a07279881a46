/**
 * The PostgreSQL boundary for text (issue 26, item 3): `text` columns refuse U+0000 and `jsonb`
 * refuses U+0000 and lone surrogates (22P05 and friends), so one such string in a node output,
 * a log line, an error or an audit entry made the whole write fail (a dry run answered 500 and
 * left its row `queued`, F8). Every `json`/`jsonb` and `text` property of every entity is mapped
 * to these types (ormOptions, `discovery.onMetadata`), which replace each bad code unit with
 * U+FFFD on the way to the database, the rule of engine/wellFormedText.ts. Raw SQL writes do not
 * pass here: they apply the same rule to their parameters (`wellFormedParams`, and `toStorable`
 * before serializing jsonb values), at each area's SQL helper or statement.
 *
 * Input that arrives through the API is refused with a 400 before it gets this far
 * (api/http/route.ts); this is the net for what the service produces itself.
 */
import {
  JsonType,
  ReferenceKind,
  TextType,
  types,
  type EntityMetadata,
  type EntityProperty,
  type Platform,
  type TransformContext,
} from '@mikro-orm/postgresql';
import { storableString, wellFormedJsonText } from '../engine/wellFormedText';

export class WellFormedJsonType extends JsonType {
  override convertToDatabaseValue(value: unknown, platform: Platform, context?: TransformContext): string | null {
    const json = super.convertToDatabaseValue(value, platform, context);
    return typeof json === 'string' ? wellFormedJsonText(json) : json;
  }
}

export class WellFormedTextType extends TextType {
  override convertToDatabaseValue(value: string | null | undefined): string | null | undefined {
    return typeof value === 'string' ? storableString(value) : value;
  }
}

/**
 * `discovery.onMetadata` of the ORM: every json/jsonb and text property of an entity gets the
 * well-formed type (the ORM would otherwise give json its own JsonType, which a mapped-type hook
 * cannot replace). A new instance per property: the ORM keeps per-property state on it.
 * (`string`/varchar properties hold ids, enums and API-validated names, and keep the ORM's type.)
 * defineEntity's builders (`p.json()`, `p.text()`) give the type as a class: it is named here,
 * as the ORM would name it later, so that the property reads as if declared `type: 'json'`.
 */
export function useWellFormedTypes(meta: EntityMetadata): void {
  for (const prop of Object.values(meta.properties)) {
    if (prop.customType || (prop.kind && prop.kind !== ReferenceKind.SCALAR)) continue;
    const name = String(typeName(prop.type) ?? '').toLowerCase();
    const type = [name, String(prop.columnTypes?.[0] ?? '').toLowerCase()];
    if (type.includes('json') || type.includes('jsonb')) prop.customType = new WellFormedJsonType();
    else if (type.includes('text')) prop.customType = new WellFormedTextType();
    else continue;
    prop.type = name;
  }
}

/** The name of one of the ORM's own types given as a class (`types.json` → 'json'); anything else as it is. */
function typeName(type: EntityProperty['type']): unknown {
  if (typeof type !== 'function') return type;
  return Object.entries(types).find(([, t]) => t === type)?.[0];
}
