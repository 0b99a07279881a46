/**
 * The PostgreSQL boundary for text (issue 26, item 3): `text` columns refuse U+0000 and `jsonb`
 * refuses U+0000 and lone surrogates (22P05 and friends), so one such string in a node output,
 * a log line, an error or an audit entry made the whole write fail (a dry run answered 500 and
 * left its row `queued`, F8). Every `json`/`jsonb` and `text` property of every entity is mapped
 * to these types (ormOptions, `discovery.getMappedType`), which replace each bad code unit with
 * U+FFFD on the way to the database, the rule of engine/wellFormedText.ts. Raw SQL writes do not
 * pass here: they apply `toStorable` at their one write helper (services/runs/readModel.ts).
 *
 * Input that arrives through the API is refused with a 400 before it gets this far
 * (api/http/route.ts); this is the net for what the service produces itself.
 */
import { JsonType, TextType, type Platform, type TransformContext, type Type } from '@mikro-orm/postgresql';
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
 * `discovery.getMappedType` of the ORM: json and text columns get the well-formed types. A new
 * instance each time, because the ORM keeps per-property state on a property's type.
 * (`string`/varchar columns hold ids, enums and API-validated names, and keep the ORM's type.)
 */
export function wellFormedMappedType(type: string): Type<unknown> | undefined {
  const t = type.toLowerCase();
  if (t === 'json' || t === 'jsonb') return new WellFormedJsonType();
  if (t === 'text') return new WellFormedTextType();
  return undefined;
}
