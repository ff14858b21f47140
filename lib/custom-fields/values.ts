// Custom fields at request time: filled in, copied, fingerprinted and patched; a rule set that does nothing when the option is off.
import { isRecord } from '../http/json-schema.js'
import { validationError, type Validate } from '../http/validation.js'
import { copyJson, customFieldForms } from './forms.js'
import type { CustomFieldSchemas, CustomFieldValues } from './types.js'

/** An order, an item or an input as custom-field code sees it, whatever the host declared. */
interface HasCustomFields {
  customFields?: CustomFieldValues
}
interface OrderLike extends HasCustomFields {
  items: readonly object[]
}

/** What the order rules do with custom fields. */
export interface CustomFieldRules {
  /** Gives a new order (and each item) `{}` where the create left custom fields out. */
  fill: (order: OrderLike, input: OrderLike) => void
  /** Gives each line `{}` where its input left custom fields out: a create's, or those a change adds. */
  fillItems: (items: readonly object[]) => void
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
  /** Throws FST_ERR_VALIDATION unless patched custom fields (if any) still match the schema. */
  check: (fields: CustomFieldValues | undefined) => void
  /** Deep-freezes the custom fields of an order handed to host code; the caller freezes the rest. */
  freeze: (order: OrderLike) => void
}

/** The rules without the `customFields` option: orders have none, and nothing is paid for them. */
export const noCustomFields: CustomFieldRules = Object.freeze({
  fill () {},
  fillItems () {},
  own: <T extends object>(input: T) => input,
  fingerprint: () => '',
  patched: () => undefined,
  check () {},
  freeze () {}
})

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

const fieldsOf = (value: object) => (value as HasCustomFields).customFields

/** The rules for the host's custom field schemas; `validatorOf` compiles the strict order form once. */
export function customFieldRules (schemas: CustomFieldSchemas | undefined, validatorOf: (schema: object) => Validate): CustomFieldRules {
  if (schemas === undefined) return noCustomFields
  const { order, item } = schemas
  const validateOrder = order === undefined ? undefined : validatorOf(customFieldForms(order, 'order').strict)
  return {
    fill (created, input) {
      if (order !== undefined) (created as HasCustomFields).customFields = input.customFields ?? {}
      this.fillItems(created.items)
    },
    fillItems (items) {
      if (item === undefined) return
      for (const orderItem of items as HasCustomFields[]) orderItem.customFields ??= {}
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
      // A patch is only in the update schema when the host gave an order schema.
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
      if (fields !== undefined && !validateOrder!(fields)) {
        throw validationError(validateOrder!.errors!.map(error => ({ ...error, instancePath: `/customFields${error.instancePath}` })), 'body')
      }
    },
    freeze (created) {
      deepFreeze(created.customFields)
      for (const orderItem of created.items) deepFreeze(fieldsOf(orderItem))
    }
  }
}
