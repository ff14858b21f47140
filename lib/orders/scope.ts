// Scope: what a caller may see and touch, and who acts. With a customerId, only that customer's orders; with a store, only that store's.
import { codes } from '../errors.js'
import { order as limits } from '../limits.js'
import { StoreSchema } from '../http/schemas.js'

/**
 * What a caller may see and touch: with a `customerId`, only that customer's orders; with a `store`,
 * only that store's (both apply when both are given). An `actor` signs every history entry made under it.
 */
export interface OrderScope {
  customerId?: string
  /** A store's key: every order read or written is that store's; a new order goes into it. */
  store?: string
  /** Who acts (a staff id, `job:nightly-cancel`): recorded as `by` on each history entry made under this scope. */
  actor?: string
}

const STORE = new RegExp(StoreSchema.pattern!)
// Control characters (C0, DEL and C1): an actor is shown in logs and back-offices as it is.
const CONTROL = /\p{Cc}/u

/** Each key a scope may have, and the rule its value keeps when present. */
const RULES: ReadonlyArray<[key: keyof OrderScope, rule: string, keeps: (value: unknown) => boolean]> = [
  // Counted in characters, as the body's customerId is.
  ['customerId', `customerId must be a string of 1 to ${limits.customerIdLength} characters`,
    value => typeof value === 'string' && value !== '' && [...value].length <= limits.customerIdLength],
  ['store', `store must be a string of 1 to ${limits.storeLength} characters of A-Z, a-z, 0-9, "_", "." and "-"`,
    value => typeof value === 'string' && value.length <= limits.storeLength && STORE.test(value)],
  ['actor', `actor must be a string of 1 to ${limits.actorLength} characters without control characters`,
    value => typeof value === 'string' && value !== '' && [...value].length <= limits.actorLength && !CONTROL.test(value)]
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
 * `true`) allows everything; an object whose keys keep their RULES (`customerId`, `store` and `actor`
 * each absent or a string of its form) is a scope. Anything else (a `customerId` of null, a number or
 * the wrong length, a store key with a space; null, an array, a string...) throws ORDER_INVALID_SCOPE
 * naming `source` and the rule it broke, with the scope's `shape` (types and key names, no value) for
 * the log, so nothing is read or written with it. `false` is the caller's to handle before (403).
 */
export function checkScope (given: unknown, source: string): OrderScope | undefined {
  if (given === undefined || given === true) return undefined
  let broken = 'it must be an object like { customerId, store, actor }, true, false or nothing'
  if (typeof given === 'object' && given !== null && !Array.isArray(given)) {
    const scope = given as Record<string, unknown>
    // Undefined is absent, as for any optional property in TypeScript.
    const rule = RULES.find(([key, , keeps]) => scope[key] !== undefined && !keeps(scope[key]))
    if (rule === undefined) return given as OrderScope
    broken = rule[1]
  }
  throw Object.assign(new codes.ORDER_INVALID_SCOPE(source, broken), { shape: shapeOf(given) })
}
