// Scope: what a caller may see and touch. With a customerId, only that customer's orders.
import { codes } from './errors.js'
import { order as limits } from './limits.js'

/** What a caller may see and touch: with a `customerId`, only that customer's orders. */
export interface OrderScope {
  customerId?: string
}

/** Each key a scope may have, and the rule its value keeps when present. */
const RULES: ReadonlyArray<[key: keyof OrderScope, rule: string, keeps: (value: unknown) => boolean]> = [
  // Counted in characters, as the body's customerId is.
  ['customerId', `customerId must be a string of 1 to ${limits.customerIdLength} characters`,
    value => typeof value === 'string' && value !== '' && [...value].length <= limits.customerIdLength]
]

/**
 * What a bad scope looked like, for the log: its type, or the type of each key's value. Hosts return
 * user records as scopes by mistake, so no value is ever shown, not even a key's length.
 */
function shapeOf (given: unknown): string {
  if (given === null) return 'null'
  if (Array.isArray(given)) return 'an array'
  if (typeof given !== 'object') return typeof given
  return `{ ${Object.keys(given).map(key => `${JSON.stringify(key)}: ${shapeOf((given as Record<string, unknown>)[key]).replace(/^\{.*\}$/s, 'object')}`).join(', ')} }`
}

/**
 * The scope a host gave, checked so that a mistake fails closed: `undefined` (and, from `authorize`,
 * `true`) allows everything; an object whose keys keep their RULES (`customerId` absent or a string
 * within the customer id's length) is a scope. Anything else (a `customerId` of null, a number or the wrong
 * length; null, an array, a string...) throws ORDER_INVALID_SCOPE naming `source` and the rule it
 * broke, with the scope's `shape` (types and key names, no value) for the log, so nothing is read or
 * written with it. `false` is the caller's to handle before (403).
 */
export function checkScope (given: unknown, source: string): OrderScope | undefined {
  if (given === undefined || given === true) return undefined
  let broken = 'it must be an object like { customerId }, true, false or nothing'
  if (typeof given === 'object' && given !== null && !Array.isArray(given)) {
    const scope = given as Record<string, unknown>
    // Undefined is absent, as for any optional property in TypeScript.
    const rule = RULES.find(([key, , keeps]) => scope[key] !== undefined && !keeps(scope[key]))
    if (rule === undefined) return given as OrderScope
    broken = rule[1]
  }
  throw Object.assign(new codes.ORDER_INVALID_SCOPE(source, broken), { shape: shapeOf(given) })
}
