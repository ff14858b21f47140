// fast-check arbitraries for the property tests: valid create bodies and the workflow's statuses.
import fc from 'fast-check'
import { defaultWorkflow, type CreateOrderInput } from '../../lib/index.js'

export const STATUSES = Object.keys(defaultWorkflow.transitions)
export const CUSTOMERS = ['cus_1', 'cus_2', 'cus_3']
export const STORES = ['eu', 'us']

export const statusArb = fc.constantFrom(...STATUSES)

export function allowed (from: string, to: string): boolean {
  return (defaultWorkflow.transitions as Record<string, readonly string[]>)[from]!.includes(to)
}

const itemArb = fc.record({
  sku: fc.string({ minLength: 1, maxLength: 8 }),
  name: fc.string({ minLength: 1, maxLength: 12 }),
  quantity: fc.integer({ min: 1, max: 1000 }),
  unitPrice: fc.integer({ min: 0, max: 1_000_000 })
}, { requiredKeys: ['sku', 'quantity', 'unitPrice'], noNullPrototype: true })

/** A body createOrder accepts; "__proto__" is left out as a key since the JSON parser refuses it. */
export const createBodyArb: fc.Arbitrary<CreateOrderInput> = fc.record({
  customerId: fc.constantFrom(...CUSTOMERS),
  currency: fc.constantFrom('EUR', 'USD', 'JPY'),
  items: fc.array(itemArb, { minLength: 1, maxLength: 4 }),
  metadata: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 12 }).filter(key => key !== '__proto__'),
    fc.string({ maxLength: 20 }),
    { maxKeys: 4, noNullPrototype: true }
  ),
  store: fc.constantFrom(...STORES)
}, { requiredKeys: ['customerId', 'currency', 'items'], noNullPrototype: true })

/** Two create bodies are the same request when they would store the same order. */
export function sameRequest (a: CreateOrderInput, b: CreateOrderInput): boolean {
  const canonical = (body: CreateOrderInput) => JSON.stringify([
    body.customerId,
    body.currency,
    body.items.map(({ sku, name, quantity, unitPrice }) => [sku, name ?? null, quantity, unitPrice]),
    Object.entries(body.metadata ?? {}).sort(([x], [y]) => x < y ? -1 : 1),
    body.store ?? null
  ])
  return canonical(a) === canonical(b)
}
