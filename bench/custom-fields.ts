// The custom fields the benchmark measures createOrder with: ten on the order, two on each item.
import { Type } from '@sinclair/typebox'

export const customFields = {
  order: Type.Object({
    address: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 100 }),
      line1: Type.String({ minLength: 1, maxLength: 200 }),
      postalCode: Type.String({ maxLength: 20 }),
      city: Type.String({ minLength: 1, maxLength: 100 }),
      country: Type.String({ pattern: '^[A-Z]{2}$' })
    }),
    phone: Type.String({ maxLength: 32 }),
    email: Type.String({ format: 'email' }),
    taxId: Type.Optional(Type.String({ maxLength: 32 })),
    deliveryDate: Type.String({ format: 'date' }),
    priority: Type.Union([Type.Literal('standard'), Type.Literal('express')]),
    insured: Type.Boolean(),
    weightKg: Type.Number({ minimum: 0 }),
    parcels: Type.Integer({ minimum: 1, maximum: 100 }),
    notes: Type.Optional(Type.String({ maxLength: 500 }))
  }),
  item: Type.Object({
    giftNote: Type.Optional(Type.String({ maxLength: 200 })),
    engraving: Type.Optional(Type.String({ maxLength: 40 }))
  })
}

/** The benchmark's createOrder body (2 items, metadata) with every custom field filled. */
export function withCustomFields (body: string): string {
  const order = JSON.parse(body)
  return JSON.stringify({
    ...order,
    items: order.items.map((item: object, i: number) => ({ ...item, customFields: { giftNote: `For Sam, with love (${i})`, engraving: 'S + J' } })),
    customFields: {
      address: { name: 'Jo Martin', line1: '12 rue de la Paix', postalCode: '75002', city: 'Paris', country: 'FR' },
      phone: '+33 1 23 45 67 89',
      email: 'jo.martin@example.com',
      taxId: 'FR12345678901',
      deliveryDate: '2026-03-14',
      priority: 'express',
      insured: true,
      weightKg: 1.25,
      parcels: 2,
      notes: 'Leave with the concierge'
    }
  })
}
