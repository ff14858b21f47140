// Custom fields: the host's typed extra fields on orders and items, checked at register, made strict, patched and fingerprinted.
import type { TSchema } from '@sinclair/typebox'
import { codes } from './errors.js'
import { createAjv, validationError, type Validate } from './validation.js'

/**
 * The TypeScript types of the host's custom fields, declared once by module augmentation, the way
 * `@fastify/jwt` lets hosts type their payload (the augmenting file must import 'fastify-order'):
 *
 * ```ts
 * declare module 'fastify-order' {
 *   interface OrderCustomFields { order: Static<typeof Shipping>, item: Static<typeof Gift> }
 * }
 * ```
 *
 * Left empty, `Order`, `OrderItem` and the inputs have no `customFields` at all.
 */
export interface OrderCustomFields {}

/** A schema of objects: `Type.Object(…)`, or `Type.Record(…)`. */
export type ObjectSchema = TSchema & { type: 'object' }

/** The `customFields` option: TypeBox object schemas of the order's and each item's custom fields. */
export interface CustomFieldSchemas {
  order?: ObjectSchema
  item?: ObjectSchema
}

/**
 * A patch of custom fields, as updateOrderStatus takes it: a key given replaces its value, `null`
 * removes an optional key.
 */
export type CustomFieldsPatch<T> = {
  [K in keyof T]?: T[K] | ({} extends Pick<T, K> ? null : never)
}

/** The schema of the `customFields` option for one kind, tied to the declared type when there is one. */
export type CustomFieldsSchemaOf<K extends 'order' | 'item'> =
  OrderCustomFields extends { [P in K]: infer T } ? ObjectSchema & { static: T } : ObjectSchema

/** Custom field values as the plugin handles them, whatever the host declared: a JSON object. */
export type CustomFieldValues = Record<string, unknown>

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

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** True for a schema of objects: its `type` is (or includes) "object". Boolean schemas have no type. */
function describesObject (schema: unknown): boolean {
  const { type } = Object(schema) as Json
  return type === 'object' || (Array.isArray(type) && type.includes('object'))
}

/** A JSON value copied, so the plugin never shares (or later freezes) an object of the caller's. */
function copyJson<T> (value: T): T {
  // An option left undefined in a schema, such as Type.String({ maxLength: undefined }), stays so.
  return value === undefined ? value : JSON.parse(JSON.stringify(value))
}

function invalid (name: string, message: string) {
  return new codes.ORDER_INVALID_OPTIONS(`customFields.${name} ${message}`)
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')

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
  const sub = (value: unknown, at: string) => strictCopy(value, at, name, close)
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
    let copy: unknown
    if ((key === 'properties' || key === 'patternProperties') && isRecord(value)) {
      copy = Object.fromEntries(Object.entries(value).map(([property, member]) =>
        [property, sub(member, `${path}/${key}/${escapePointer(property)}`)]))
    } else if (key === 'additionalProperties' || key === 'additionalItems') {
      copy = sub(value, `${path}/${key}`)
    } else if (key === 'items') {
      copy = Array.isArray(value) ? value.map((member, i) => sub(member, `${path}/items/${i}`)) : sub(value, `${path}/items`)
    } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
      // Members of an intersection, or alternatives beside the object's own properties, each see
      // only part of the keys: closing them would refuse valid objects, leaving them open would not refuse.
      if ((key === 'allOf' || object) && value.some(describesObject)) {
        throw invalid(name, `combines object schemas with ${key} at ${path}, where unknown keys cannot be refused; merge them into one Type.Object (Type.Composite) or use Type.Union of whole objects`)
      }
      copy = value.map((member, i) => sub(member, `${path}/${key}/${i}`))
    } else {
      copy = copyJson(value)
    }
    entries.push([key, copy])
  }
  if (close && object && schema.additionalProperties === undefined) entries.push(['additionalProperties', false])
  return Object.fromEntries(entries)
}

/**
 * `{ type, enum }` for the `anyOf` of a schema that is only a union of bare literals of one type
 * (Type.Literal makes each `{ const, type }`); otherwise undefined.
 */
function enumOf (holder: Json): Json | undefined {
  const members = holder.anyOf as unknown[]
  const type = Object(members[0]).type
  const literal = (member: unknown) => isRecord(member) && Object.keys(member).length === 2 && member.type === type &&
    ['string', 'number', 'boolean'].includes(typeof member.const)
  return members.length === 0 || ['type', 'enum'].some(key => Object.hasOwn(holder, key)) || !members.every(literal)
    ? undefined
    : { type, enum: members.map(member => (member as Json).const) }
}

/** `{ anyOf: [schema, null] }`: null removes the key in a patch. */
const orNull = (schema: unknown) => ({ anyOf: [schema, { type: 'null' }] })

function patchOf (strict: Json): TSchema {
  const required = new Set(Array.isArray(strict.required) ? strict.required : [])
  const properties = isRecord(strict.properties) ? strict.properties : {}
  const patch: Json = {
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
    const strict = strictCopy(schema, '#', name, true) as Json
    try {
      createAjv().compile(strict)
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

/** Equality of JSON values, whatever the order of object keys. */
function sameJson (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (!isRecord(a) || !isRecord(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((value, i) => sameJson(value, b[i]))
  }
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every(key => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
}

/** A JSON value as a string that does not depend on the order of object keys. */
function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (!isRecord(value)) return JSON.stringify(value)
  const keys = Object.keys(value).sort()
  return `{${keys.map(key => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`
}

const isEmpty = (fields: CustomFieldValues | undefined) => fields === undefined || Object.keys(fields).length === 0

function deepFreeze (value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return
  for (const member of Object.values(value)) deepFreeze(member)
  Object.freeze(value)
}

/** An order, an item or an input as custom-field code sees it, whatever the host declared. */
interface HasCustomFields {
  customFields?: CustomFieldValues
}
interface OrderLike extends HasCustomFields {
  items: readonly object[]
}

const fieldsOf = (value: object) => (value as HasCustomFields).customFields

/** Deep-freezes the custom fields of an order handed to host code; the caller freezes the rest. */
export function freezeCustomFields (order: OrderLike): void {
  deepFreeze(order.customFields)
  for (const item of order.items) deepFreeze(fieldsOf(item))
}

/** What the service does with custom fields; only made when the option is set, so orders without pay nothing. */
export interface CustomFieldRules {
  /** Gives a new order (and each item) `{}` where the create left custom fields out. */
  fill: (order: OrderLike, input: OrderLike) => void
  /**
   * Takes JSON copies of a caller's custom fields (app.orders), so the stored order shares nothing
   * with it and holds no undefined values, as after a request.
   */
  own: <T extends object>(input: T) => T
  /**
   * What the idempotency fingerprint adds for custom fields: '' when the body has none (or only
   * empty ones), so a body without them keeps the fingerprint it had before the option existed.
   */
  fingerprint: (input: OrderLike) => string
  /** The order's custom fields after the update's patch, or undefined when the patch changes nothing. */
  patched: (current: object, input: object) => CustomFieldValues | undefined
  /** Throws FST_ERR_VALIDATION unless patched custom fields still match the schema. */
  check: (fields: CustomFieldValues) => void
  /** Sets an order's custom fields. */
  set: (order: object, fields: CustomFieldValues) => void
}

export function customFieldRules (schemas: CustomFieldSchemas, validatorOf: (schema: object) => Validate): CustomFieldRules {
  const { order, item } = schemas
  const validateOrder = order === undefined ? undefined : validatorOf(customFieldForms(order, 'order').strict)
  return {
    fill (created, input) {
      if (order !== undefined) (created as HasCustomFields).customFields = input.customFields ?? {}
      if (item !== undefined) {
        for (const orderItem of created.items as HasCustomFields[]) orderItem.customFields ??= {}
      }
    },
    own (input) {
      const copy = input as unknown as OrderLike
      if (copy.customFields !== undefined) copy.customFields = copyJson(copy.customFields)
      // An update's input has no items.
      for (const orderItem of (copy.items ?? []) as HasCustomFields[]) {
        if (orderItem.customFields !== undefined) orderItem.customFields = copyJson(orderItem.customFields)
      }
      return input
    },
    fingerprint (input) {
      const itemFields = input.items.map(fieldsOf)
      if (isEmpty(input.customFields) && itemFields.every(isEmpty)) return ''
      return canonicalJson([input.customFields ?? {}, itemFields.map(fields => fields ?? {})])
    },
    patched (current, input) {
      const patch = fieldsOf(input)
      if (patch === undefined) return undefined
      const stored = fieldsOf(current)
      let next: CustomFieldValues | undefined
      for (const [key, value] of Object.entries(patch)) {
        const has = stored !== undefined && Object.hasOwn(stored, key)
        if (value === null ? !has : has && sameJson(stored[key], value)) continue
        next ??= Object.fromEntries(Object.entries(stored ?? {}))
        if (value === null) delete next[key]
        else Object.defineProperty(next, key, { value, enumerable: true, writable: true, configurable: true })
      }
      return next
    },
    check (fields) {
      if (!validateOrder!(fields)) {
        throw validationError(validateOrder!.errors!.map(error => ({ ...error, instancePath: `/customFields${error.instancePath}` })), 'body')
      }
    },
    set (target, fields) {
      (target as HasCustomFields).customFields = fields
    }
  }
}
