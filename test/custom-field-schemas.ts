// Custom field schemas for the tests: a shipping address on the order, a gift note on each item.
import { Type } from '@sinclair/typebox'
import { orderBody } from './helper.js'

export const Shipping = Type.Object({
  address: Type.Object({
    name: Type.String({ minLength: 1 }),
    lines: Type.Array(Type.String(), { minItems: 1, maxItems: 3 }),
    city: Type.String(),
    country: Type.String({ pattern: '^[A-Z]{2}$' })
  }),
  trackingNumber: Type.Optional(Type.String({ minLength: 1 })),
  insured: Type.Optional(Type.Boolean()),
  weightKg: Type.Optional(Type.Number({ minimum: 0 })),
  parcels: Type.Optional(Type.Array(Type.Object({ ref: Type.String(), grams: Type.Integer() }))),
  carrier: Type.Optional(Type.Union([
    Type.Object({ kind: Type.Literal('post'), service: Type.String() }),
    Type.Object({ kind: Type.Literal('courier'), company: Type.String(), express: Type.Boolean() })
  ]))
})

export const Gift = Type.Object({
  giftNote: Type.Optional(Type.String({ maxLength: 200 })),
  wrapped: Type.Optional(Type.Boolean())
})

export const address = { name: 'Jo Martin', lines: ['12 rue de la Paix'], city: 'Paris', country: 'FR' }

/** A createOrder body with custom fields on the order and, when given, on its items (one each). */
export function bodyWith (customFields: object | undefined, ...itemFields: Array<object | undefined>) {
  const base = orderBody()
  const items = itemFields.length === 0
    ? base.items
    : itemFields.map((fields, i) => ({ sku: `A-${i + 1}`, quantity: 1, unitPrice: 100, ...(fields && { customFields: fields }) }))
  return { ...base, items, ...(customFields && { customFields }) }
}
