// The documented form of a request schema: a Schema Object that OpenAPI 3.0 and 3.1 both accept.
import { mapSubschemas, NOT_SUBSCHEMAS, type Schema } from './json-schema.js'

// Read alike by an OpenAPI 3.0 Schema Object and by JSON Schema (OpenAPI 3.1), or converted for each
// version by @fastify/swagger itself: $id and $schema, `type: 'null'` and type lists, nullable, examples.
const KEPT = new Set([
  'title', 'description', 'default', 'example', 'examples', 'deprecated', 'readOnly', 'writeOnly',
  'type', 'nullable', 'enum', 'format', 'contentEncoding', 'multipleOf', 'minimum', 'maximum',
  'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'minProperties',
  'maxProperties', 'required', 'discriminator', 'xml', 'externalDocs', '$ref', '$id', '$schema'
])

/**
 * `schema` as OpenAPI documents it: what OpenAPI 3.0 cannot say (`propertyNames`, `if`, `contains`,
 * `dependencies`, ...) is left out or loosened, so requests are validated against `schema` itself and
 * its description says what the keywords cannot. Returns `schema` itself when nothing needs to change.
 */
export function openApiSchemaOf<T> (schema: T): T {
  return formOf(schema) as T
}

function formOf (schema: unknown): unknown {
  // OpenAPI 3.0 has no boolean schemas.
  if (typeof schema === 'boolean') return schema ? {} : { not: {} }
  const source = schema as Schema
  const form: Schema = {}
  for (const [key, value] of Object.entries(source)) {
    if (KEPT.has(key) || key.startsWith('x-')) {
      form[key] = value
      continue
    }
    // Tuples and patternProperties are rewritten below; a boolean additionalProperties stays as it is.
    if (key === 'patternProperties' || (key === 'items' && Array.isArray(value)) || (key === 'additionalProperties' && typeof value === 'boolean')) {
      if (key === 'additionalProperties') form[key] = value
      continue
    }
    const mapped = key === 'additionalItems' ? NOT_SUBSCHEMAS : mapSubschemas(key, value, formOf)
    if (mapped !== NOT_SUBSCHEMAS) form[key] = mapped
    // A looser `not` would reject more, so it stays only as it is.
    else if (key === 'not' && formOf(value) === value) form[key] = value
    else if (key === 'const' && !('enum' in source)) form.enum = [value]
  }

  // JSON Schema's numeric exclusive bounds are booleans in OpenAPI 3.0: both versions read the inclusive one alike.
  for (const [exclusive, inclusive, tighter] of [['exclusiveMinimum', 'minimum', Math.max], ['exclusiveMaximum', 'maximum', Math.min]] as const) {
    const bound = source[exclusive]
    if (typeof bound !== 'number') continue
    const other = source[inclusive]
    form[inclusive] = typeof other === 'number' ? tighter(other, bound) : bound
  }
  // A tuple (`items` as a list) closed by `additionalItems`: every item is one of the listed schemas.
  if (Array.isArray(source.items) && source.additionalItems !== undefined && source.additionalItems !== true) {
    const members = [...source.items, ...(source.additionalItems === false ? [] : [source.additionalItems])]
    form.items = { anyOf: listOf(members) }
  }
  // OpenAPI 3.0 has no patternProperties: as @fastify/swagger does for a TypeBox Record, the values
  // of pattern-matched keys (and any other extra key's) are documented as additionalProperties.
  if (source.patternProperties !== undefined) {
    const extra = source.additionalProperties
    const members = listOf([...Object.values(source.patternProperties as Schema), ...(typeof extra === 'object' ? [extra] : [])])
    if (extra === true || (extra === undefined && members.length === 0)) delete form.additionalProperties
    else form.additionalProperties = members.length === 0 ? false : members.length === 1 ? members[0] : { anyOf: members }
  }
  // Loosened members of a oneOf may overlap, where oneOf would fail; anyOf accepts what they accepted.
  if (form.oneOf !== source.oneOf) {
    const members = form.oneOf
    delete form.oneOf
    if (form.anyOf === undefined) form.anyOf = members
    else form.allOf = [...(form.allOf as unknown[] ?? []), { anyOf: members }]
  }

  const keys = Object.keys(form)
  return keys.length === Object.keys(source).length && keys.every(key => form[key] === source[key]) ? source : form
}

function listOf (schemas: unknown[]): unknown[] {
  return mapSubschemas('anyOf', schemas, formOf) as unknown[]
}
