// The form of a response schema that fast-json-stringify writes fastest: the same JSON out, without a schema check per value.
import { isRecord, mapSubschemas, NOT_SUBSCHEMAS, type Schema } from './json-schema.js'

/**
 * `schema` for the serializer, with every `oneOf` told apart by a discriminator (a change's actions)
 * as one object of all its branches' properties. fast-json-stringify picks a `oneOf` branch by
 * validating the value against each branch in turn, which cost a change's answer more than writing
 * it; the branches of a discriminated `oneOf` are objects whose properties are each written the same
 * way in every branch that has them, so the merged object writes what the matching branch would. A
 * `oneOf` whose branches give one property two types stays as it is. Returns `schema` itself when
 * nothing needs to change.
 */
export function serializedFormOf<T> (schema: T): T {
  return formOf(schema) as T
}

function formOf (schema: unknown): unknown {
  if (!isRecord(schema)) return schema
  let form: Schema | undefined
  for (const [key, value] of Object.entries(schema)) {
    const mapped = mapSubschemas(key, value, formOf)
    if (mapped === NOT_SUBSCHEMAS || mapped === value) continue
    form ??= { ...schema }
    form[key] = mapped
  }
  return mergedOneOf(form ?? schema) ?? form ?? schema
}

/** A discriminated `oneOf` of objects as one object of every branch's properties, or undefined. */
function mergedOneOf (schema: Schema): Schema | undefined {
  const { oneOf, discriminator } = schema
  const tag = isRecord(discriminator) ? discriminator.propertyName : undefined
  if (!Array.isArray(oneOf) || typeof tag !== 'string') return undefined
  const properties: Schema = {}
  for (const branch of oneOf as unknown[]) {
    if (!isRecord(branch) || !isRecord(branch.properties)) return undefined
    for (const [name, property] of Object.entries(branch.properties)) {
      const known = properties[name]
      if (known !== undefined && JSON.stringify((known as Schema).type) !== JSON.stringify((property as Schema).type)) return undefined
      properties[name] = known ?? property
    }
  }
  // The discriminator is written as the value holds it: each branch's schema of it is a constant.
  properties[tag] = { type: 'string' }
  return { type: 'object', properties, required: [tag] }
}
