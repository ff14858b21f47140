// Walking JSON Schemas: the keywords that hold subschemas, shared by the custom fields' request forms and the OpenAPI form.

export type Schema = Record<string, unknown>

export const isRecord = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A schema of objects: its `type` is (or includes) "object". Boolean schemas have no type. */
export function describesObject (schema: unknown): boolean {
  const { type } = Object(schema) as Schema
  return type === 'object' || (Array.isArray(type) && type.includes('object'))
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')

/** Returned by `mapSubschemas` for a keyword whose value is not made of subschemas. */
export const NOT_SUBSCHEMAS: unique symbol = Symbol('not subschemas')

/**
 * The value of `keyword` with each subschema it holds replaced by `visit(subschema, pointer)`, where
 * `pointer` is the subschema's JSON pointer below the schema (`/properties/a`, `/anyOf/0`). The value
 * itself comes back when every subschema does. Only the keywords whose subschemas describe the
 * instance or its parts as they are (properties, items, alternatives) are walked: conditions (`not`,
 * `if`, `contains`, `dependencies`) mean something else inside, and callers keep them as written.
 * Any other keyword gives NOT_SUBSCHEMAS.
 */
export function mapSubschemas (keyword: string, value: unknown, visit: (schema: unknown, pointer: string) => unknown): unknown {
  if ((keyword === 'properties' || keyword === 'patternProperties') && isRecord(value)) {
    const entries = Object.entries(value)
    const mapped = entries.map(([name, member]) => visit(member, `/${keyword}/${escapePointer(name)}`))
    return mapped.every((member, i) => member === entries[i]![1])
      ? value
      : Object.fromEntries(entries.map(([name], i) => [name, mapped[i]]))
  }
  if ((keyword === 'anyOf' || keyword === 'oneOf' || keyword === 'allOf' || keyword === 'items') && Array.isArray(value)) {
    const mapped = value.map((member, i) => visit(member, `/${keyword}/${i}`))
    return mapped.every((member, i) => member === value[i]) ? value : mapped
  }
  if (keyword === 'additionalProperties' || keyword === 'additionalItems' || keyword === 'items') return visit(value, `/${keyword}`)
  return NOT_SUBSCHEMAS
}
