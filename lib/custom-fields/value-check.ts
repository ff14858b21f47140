// Custom-field values that every storage can keep and every reader can serve: JSON, nested at most 32 levels.
import type { Validate } from '../http/validation.js'

/** How deep custom-field values may nest: the `customFields` object itself is level 1. */
export const MAX_CUSTOM_FIELD_DEPTH = 32

interface Problem {
  instancePath: string
  schemaPath: string
  keyword: string
  params: Record<string, unknown>
  message: string
}

const pointer = (key: string) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`

/**
 * The first reason `value` (custom fields at `path`) cannot be stored and served: nested deeper than
 * the limit (a cycle nests without end), or not JSON (a bigint, a function, a symbol, a number JSON
 * cannot write). Walks with a stack of its own, so no value can exhaust the call stack.
 */
function problemOf (value: unknown, path: string): Problem | undefined {
  const stack: Array<[unknown, string, number]> = [[value, path, 1]]
  while (stack.length > 0) {
    const [current, at, depth] = stack.pop()!
    if (typeof current === 'object' && current !== null) {
      if (depth > MAX_CUSTOM_FIELD_DEPTH) {
        return { instancePath: path, schemaPath: '#/customFields', keyword: 'maxDepth', params: { limit: MAX_CUSTOM_FIELD_DEPTH }, message: `must not nest more than ${MAX_CUSTOM_FIELD_DEPTH} levels deep` }
      }
      for (const key of Object.keys(current)) stack.push([(current as Record<string, unknown>)[key], at + pointer(key), depth + 1])
    } else if (typeof current === 'bigint' || typeof current === 'function' || typeof current === 'symbol' ||
        (typeof current === 'number' && !Number.isFinite(current))) {
      return { instancePath: at, schemaPath: '#/customFields', keyword: 'json', params: {}, message: `must be a JSON value, not ${typeof current === 'number' ? String(current) : `a ${typeof current}`}` }
    }
  }
  return undefined
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

/**
 * The custom fields of a create or update body and of its items, or of the lines a change's addItem
 * actions add, as the body holds them before validation.
 */
function * customFieldsOf (body: unknown): Generator<[unknown, string]> {
  if (!isObject(body)) return
  const { customFields, items, actions } = body
  if (customFields !== undefined) yield [customFields, '/customFields']
  if (Array.isArray(items)) {
    for (const [index, item] of items.entries()) {
      if (isObject(item) && item.customFields !== undefined) yield [item.customFields, `/items/${index}/customFields`]
    }
  }
  if (Array.isArray(actions)) {
    for (const [index, action] of actions.entries()) {
      if (isObject(action) && isObject(action.item) && action.item.customFields !== undefined) yield [action.item.customFields, `/actions/${index}/item/customFields`]
    }
  }
}

/**
 * `validate` preceded by the check of custom-field values, so a value no storage could keep or no
 * reader could serve is a validation error before anything else looks at it. Errors read as ajv's do.
 */
export function withValueLimits (validate: Validate): Validate {
  const checked = ((body: unknown) => {
    for (const [fields, path] of customFieldsOf(body)) {
      const problem = problemOf(fields, path)
      if (problem !== undefined) {
        checked.errors = [problem]
        return false
      }
    }
    const valid = validate(body)
    checked.errors = validate.errors
    return valid
  }) as Validate
  return checked
}
