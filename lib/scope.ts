// Scope: what a caller may see and touch. With a customerId, only that customer's orders.
import { inspect } from 'node:util'
import { codes } from './errors.js'

/** What a caller may see and touch: with a `customerId`, only that customer's orders. */
export interface OrderScope {
  customerId?: string
}

const MAX_CUSTOMER_ID = 128

/**
 * The scope a host gave, checked so that a mistake fails closed: `undefined` (and, from `authorize`,
 * `true`) allows everything; an object whose `customerId` is absent or a string of 1 to 128
 * characters is a scope. Anything else (a `customerId` of null, a number or the wrong length;
 * null, an array, a string...) throws ORDER_INVALID_SCOPE naming `source` and what it gave, so
 * nothing is read or written with it. `false` is the caller's to handle before (403).
 */
export function checkScope (given: unknown, source: string): OrderScope | undefined {
  if (given === undefined || given === true) return undefined
  if (typeof given === 'object' && given !== null && !Array.isArray(given)) {
    const { customerId } = given as { customerId?: unknown }
    // Undefined is absent, as for any optional property in TypeScript.
    if (customerId === undefined) return given
    // Counted in characters, as the body's customerId is.
    if (typeof customerId === 'string' && customerId !== '' && [...customerId].length <= MAX_CUSTOMER_ID) return given as OrderScope
  }
  throw new codes.ORDER_INVALID_SCOPE(source, inspect(given, { depth: 1, maxStringLength: 40, breakLength: Infinity }))
}
