// Custom fields at register time: the option checked, and each host schema made into its request, response and patch forms.
import type { TSchema } from '@sinclair/typebox'
import { codes } from '../errors.js'
import { describesObject, isRecord, mapSubschemas, NOT_SUBSCHEMAS, type Schema } from '../http/json-schema.js'
import { compileStrict } from '../http/validation.js'
import type { CustomFieldSchemas, ObjectSchema } from './types.js'

/** The forms one host schema takes in the plugin. */
export interface CustomFieldForms {
  /** Requests: every object schema the host left open refuses unknown keys. */
  strict: ObjectSchema
  /** Responses and the `Order` component: the host's schema, so the serializer drops unknown keys. */
  response: ObjectSchema
  /** updateOrderStatus: every key optional, `null` for the optional ones. */
  patch: TSchema
  /** The schema has required keys, so `customFields` is required at create. */
  required: boolean
}

/** A JSON value copied, so the plugin never shares (or later freezes) an object of the caller's. */
export function copyJson<T> (value: T): T {
  // An option left undefined in a schema, such as Type.String({ maxLength: undefined }), stays so.
  return value === undefined ? value : JSON.parse(JSON.stringify(value))
}

function invalid (name: string, message: string) {
  return new codes.ORDER_INVALID_OPTIONS(`customFields.${name} ${message}`)
}

/**
 * A copy of a host schema for requests: an object schema without `additionalProperties` gets
 * `additionalProperties: false`, through properties, items and unions at any depth. Conditions
 * (`not`, `if`, `contains`, `dependencies`) are copied as written: closing an object inside one
 * would change what it means. `$id` is dropped: the copy is embedded in the plugin's schemas.
 */
function strictCopy (schema: unknown, path: string, name: string, close: boolean): unknown {
  if (!isRecord(schema)) return copyJson(schema)
  const object = describesObject(schema)
  const entries: Array<[string, unknown]> = []
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id') continue
    // Type.Union of Type.Literal, TypeBox's spelling of an enum, becomes one: fast-json-stringify
    // would run a validator per member on every response to pick the one to write.
    const literals = key === 'anyOf' && Array.isArray(value) ? enumOf(schema) : undefined
    if (literals !== undefined) {
      entries.push(...Object.entries(literals))
      continue
    }
    if (key === '$ref') throw invalid(name, `has a $ref at ${path}; custom field schemas must be self-contained (no Type.Ref or Type.Recursive)`)
    // Members of an intersection, or alternatives beside the object's own properties, each see
    // only part of the keys: closing them would refuse valid objects, leaving them open would not refuse.
    if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value) && (key === 'allOf' || object) && value.some(describesObject)) {
      throw invalid(name, `combines object schemas with ${key} at ${path}, where unknown keys cannot be refused; merge them into one Type.Object (Type.Composite) or use Type.Union of whole objects`)
    }
    const copy = mapSubschemas(key, value, (member, pointer) => strictCopy(member, `${path}${pointer}`, name, close))
    entries.push([key, copy === NOT_SUBSCHEMAS ? copyJson(value) : copy])
  }
  if (close && object && schema.additionalProperties === undefined) entries.push(['additionalProperties', false])
  return Object.fromEntries(entries)
}

/**
 * `{ type, enum }` for the `anyOf` of a schema that is only a union of bare literals of one type
 * (Type.Literal makes each `{ const, type }`); otherwise undefined.
 */
function enumOf (holder: Schema): Schema | undefined {
  const members = holder.anyOf as unknown[]
  const type = Object(members[0]).type
  const literal = (member: unknown) => isRecord(member) && Object.keys(member).length === 2 && member.type === type &&
    ['string', 'number', 'boolean'].includes(typeof member.const)
  return members.length === 0 || ['type', 'enum'].some(key => Object.hasOwn(holder, key)) || !members.every(literal)
    ? undefined
    : { type, enum: members.map(member => (member as Schema).const) }
}

/** `{ anyOf: [schema, null] }`: null removes the key in a patch. */
const orNull = (schema: unknown) => ({ anyOf: [schema, { type: 'null' }] })

function patchOf (strict: Schema): TSchema {
  const required = new Set(Array.isArray(strict.required) ? strict.required : [])
  const properties = isRecord(strict.properties) ? strict.properties : {}
  const patch: Schema = {
    type: 'object',
    description: 'A patch of the order\'s custom fields, applied with the move: a key replaces its value, null removes an optional key',
    properties: Object.fromEntries(Object.entries(properties).map(([key, schema]) => [key, required.has(key) ? schema : orNull(schema)]))
  }
  if (isRecord(strict.patternProperties)) {
    patch.patternProperties = Object.fromEntries(Object.entries(strict.patternProperties).map(([pattern, schema]) => [pattern, orNull(schema)]))
  }
  const { additionalProperties } = strict
  patch.additionalProperties = typeof additionalProperties === 'boolean' ? additionalProperties : orNull(additionalProperties)
  return patch as unknown as TSchema
}

// One set of forms per host schema, so the routes, the service and buildOrderSchemas share the same
// objects and each is compiled once.
const formsBySchema = new WeakMap<object, CustomFieldForms>()

/** The request, response and patch forms of one host schema; throws ORDER_INVALID_OPTIONS for a schema it cannot use. */
export function customFieldForms (schema: unknown, name: 'order' | 'item'): CustomFieldForms {
  if (!isRecord(schema) || schema.type !== 'object' || (schema.properties !== undefined && !isRecord(schema.properties))) {
    const shown = isRecord(schema) ? `a schema of type ${JSON.stringify(schema.type ?? null)}` : JSON.stringify(schema) ?? typeof schema
    throw invalid(name, `must be an object schema such as Type.Object({ giftNote: Type.String() }), got ${shown}`)
  }
  let forms = formsBySchema.get(schema)
  if (forms === undefined) {
    const strict = strictCopy(schema, '#', name, true) as Schema
    try {
      compileStrict(strict)
    } catch (err) {
      throw invalid(name, `is not a schema the validator accepts: ${(err as Error).message}`)
    }
    forms = {
      strict: strict as ObjectSchema,
      response: strictCopy(schema, '#', name, false) as ObjectSchema,
      patch: patchOf(strict),
      required: Array.isArray(schema.required) && schema.required.length > 0
    }
    formsBySchema.set(schema, forms)
  }
  return forms
}

/** Checks the `customFields` option; every error says what to pass. */
export function checkCustomFields (option: unknown): CustomFieldSchemas | undefined {
  if (option === undefined) return undefined
  if (!isRecord(option)) {
    throw new codes.ORDER_INVALID_OPTIONS('customFields must be an object like { order: Type.Object({ … }), item: Type.Object({ … }) }')
  }
  for (const [name, schema] of Object.entries(option)) {
    if (name !== 'order' && name !== 'item') {
      throw new codes.ORDER_INVALID_OPTIONS(`customFields.${name} is not supported; use customFields.order or customFields.item`)
    }
    if (schema !== undefined) customFieldForms(schema, name)
  }
  const { order, item } = option as CustomFieldSchemas
  return order === undefined && item === undefined ? undefined : { order, item }
}
