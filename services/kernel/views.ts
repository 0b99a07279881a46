/**
 * Views that show some of a row's fields as they are stored: the field list is declared once, as
 * a `const` tuple, and both the view's type (`Pick<Row, (typeof FIELDS)[number]>`) and its value
 * (`pickFields(row, FIELDS)`) follow from it, so a field added to the list reaches both.
 */

/** A new object with the fields `keys` of `row`, in the order of `keys`. */
export function pickFields<T extends object, K extends keyof T>(row: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) out[key] = row[key];
  return out;
}
