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

/** Whether `order` is inside `scope`: that customer's and that store's (an order of no store is outside a store's scope), as a list shows it. */
export function inScope (order: { customerId: string, store?: string | undefined }, scope: OrderScope | undefined): boolean {
  return (scope?.customerId === undefined || order.customerId === scope.customerId) &&
    (scope?.store === undefined || order.store === scope.store)
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

const KEYS = 'customerId, store and actor'
const NOT_OBJECT = 'it must be an object like { customerId, store, actor }, true, false or nothing'
const NOT_PLAIN = 'it must be a plain object { customerId, store, actor }, not an array, a Map, a Date or a class instance'
const OTHER_KEY = `it may have no key other than ${KEYS}`
const NO_KEY = `it must have at least one of ${KEYS}; return true, never an object, to allow everything`

/** The type of one value, for a shape: never the value itself. */
function typeOf (value: unknown): string {
  if (value === null) return 'null'
  return Array.isArray(value) ? 'array' : typeof value
}

/** What kind of object a scope is when it is not a plain one: its class's name, which is the host's code, not a value. */
function kindOf (given: object): string {
  if (Array.isArray(given)) return 'an array'
  const name: unknown = Object.getPrototypeOf(given)?.constructor?.name
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object with another prototype'
}

/**
 * What a bad scope looked like, for the log: its type, its class, or the type of each key's value.
 * Hosts return user records as scopes by mistake, so no value is ever shown, not even a key's length.
 * Never throws: a revoked Proxy or a throwing getter is described as unreadable.
 */
function shapeOf (given: unknown): string {
  try {
    if (typeof given !== 'object' || given === null) return typeOf(given)
    if (!isPlain(given)) return kindOf(given)
    const scope = given as Record<PropertyKey, unknown>
    const keys = Reflect.ownKeys(scope).map(key => `${typeof key === 'symbol' ? 'a symbol' : JSON.stringify(key)}: ${typeOf(scope[key])}`)
    return keys.length === 0 ? '{}' : `{ ${keys.join(', ')} }`
  } catch {
    return 'an object that cannot be read (a revoked Proxy, or a getter that throws)'
  }
}

function isPlain (given: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(given)
  return (prototype === Object.prototype || prototype === null) && !Array.isArray(given)
}

/**
 * The rule `given` breaks, or the scope it is: a copy holding each key's value read once (a getter
 * cannot answer differently later). Throws for a revoked Proxy; the caller takes that for unreadable.
 */
function readScope (given: object): OrderScope | string {
  if (!isPlain(given)) return NOT_PLAIN
  const keys = Reflect.ownKeys(given)
  const scope: Record<string, unknown> = {}
  for (const key of keys) {
    if (typeof key === 'string' && RULES.some(([known]) => known === key)) scope[key] = (given as Record<string, unknown>)[key]
  }
  // A key present with undefined is a claim missing from a token: never "no restriction".
  const rule = RULES.find(([key, , keeps]) => Object.hasOwn(scope, key) && !keeps(scope[key]))
  if (rule !== undefined) return rule[1]
  if (keys.length > Object.keys(scope).length) return OTHER_KEY
  if (keys.length === 0) return NO_KEY
  return scope as OrderScope
}

/**
 * The scope a host gave, checked so that a mistake fails closed: `undefined` (and, from `authorize`,
 * `true`) allows everything. A scope is a plain object with at least one of `customerId`, `store` and
 * `actor`, no other key, each of them a string of its form (undefined is not absent here: it is a
 * claim a token did not have). Anything else (`{}`, `{ customerID }`, a user record, a Map, a Date, an
 * array, null, a string...) throws ORDER_INVALID_SCOPE naming `source` and the rule it broke, with the
 * scope's `shape` (types and key names, no value) for the log, so nothing is read or written with it.
 * `false` is the caller's to handle before (403).
 */
export function checkScope (given: unknown, source: string): OrderScope | undefined {
  if (given === undefined || given === true) return undefined
  let broken = NOT_OBJECT
  if (typeof given === 'object' && given !== null) {
    try {
      const scope = readScope(given)
      if (typeof scope !== 'string') return scope
      broken = scope
    } catch {
      broken = NOT_PLAIN
    }
  }
  throw Object.assign(new codes.ORDER_INVALID_SCOPE(source, broken), { shape: shapeOf(given) })
}
