// Type tests of custom fields declared by module augmentation, in a program of their own: an
// augmentation is global, and the tests beside this folder check the types without one.
// 'fastify-order' resolves to the built package, as it does in a host app.
import Fastify from 'fastify'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { expect, test } from 'tstyche'
import orderPlugin, {
  buildOrderSchemas, type CreateOrderInput, type CustomFieldsPatch, type Order, type OrderItem, type OrderPage,
  type UpdateOrderStatusInput
} from 'fastify-order'

const Shipping = Type.Object({
  address: Type.Object({ line1: Type.String(), city: Type.String(), country: Type.String() }),
  trackingNumber: Type.Optional(Type.String())
})
const Gift = Type.Object({ giftNote: Type.Optional(Type.String()) })

declare module 'fastify-order' {
  interface OrderCustomFields {
    order: Static<typeof Shipping>
    item: Static<typeof Gift>
  }
}

type ShippingFields = Static<typeof Shipping>
type GiftFields = Static<typeof Gift>

const app = Fastify()
declare function staticOf<T extends TSchema> (schema: T): Static<T>
const address = { line1: '1 Main St', city: 'Lyon', country: 'FR' }
const items = [{ sku: 'A-1', quantity: 1, unitPrice: 100 }]

test('orders and items carry the declared custom fields', () => {
  // Optional: orders stored before the option was set have none.
  expect<Order['customFields']>().type.toBe<ShippingFields | undefined>()
  expect<OrderItem['customFields']>().type.toBe<GiftFields | undefined>()
  expect<OrderPage['items'][number]>().type.toBe<Order>()
  app.orders.on('created', order => { expect(order.customFields).type.toBe<ShippingFields | undefined>() })
  app.orders.on('statusChanged', ({ order }) => { expect(order.items[0]!.customFields).type.toBe<GiftFields | undefined>() })
})

test('a create must carry custom fields whose schema has required keys, with the declared types', () => {
  expect<CreateOrderInput['customFields']>().type.toBe<ShippingFields>()
  expect(app.orders.create({ customerId: 'c', currency: 'EUR', items, customFields: { address } })).type.toBe<Promise<Order>>()
  expect(app.orders.create).type.toBeCallableWith({ customerId: 'c', currency: 'EUR', items: [{ ...items[0]!, customFields: { giftNote: 'hi' } }], customFields: { address } })
  expect(app.orders.create).type.not.toBeCallableWith({ customerId: 'c', currency: 'EUR', items })
  expect(app.orders.create({ customerId: 'c', currency: 'EUR', items, customFields: { address: { ...address, city: 69 } } }))
    .type.toRaiseError(/'number' is not assignable to type 'string'/)
  expect(app.orders.create({ customerId: 'c', currency: 'EUR', items, customFields: { address, trackingNumbr: 'T' } }))
    .type.toRaiseError(/'trackingNumbr' does not exist/)
  expect(app.orders.create).type.not.toBeCallableWith({ customerId: 'c', currency: 'EUR', items: [{ ...items[0]!, customFields: { giftNote: 1 } }], customFields: { address } })
})

test('item custom fields without required keys may be left out', () => {
  expect<CreateOrderInput['items'][number]['customFields']>().type.toBe<GiftFields | undefined>()
})

test('updateOrderStatus takes a patch: null removes an optional key only', () => {
  expect<UpdateOrderStatusInput['customFields']>().type.toBe<CustomFieldsPatch<ShippingFields> | undefined>()
  expect(app.orders.updateStatus).type.toBeCallableWith({ id: 'o', status: 'shipped', customFields: { trackingNumber: 'T' } })
  expect(app.orders.updateStatus).type.toBeCallableWith({ id: 'o', status: 'shipped', customFields: { trackingNumber: null } })
  expect(app.orders.updateStatus).type.not.toBeCallableWith({ id: 'o', status: 'shipped', customFields: { address: null } })
  expect(app.orders.updateStatus).type.not.toBeCallableWith({ id: 'o', status: 'shipped', customFields: { trackingNumber: 42 } })
  expect(app.orders.updateStatus).type.not.toBeCallableWith({ id: 'o', status: 'shipped', customFields: { carrier: 'UPS' } })
})

test('the customFields option takes schemas of the declared types', () => {
  expect(app.register(orderPlugin, { customFields: { order: Shipping, item: Gift } })).type.not.toRaiseError()
  expect(app.register(orderPlugin, { customFields: { order: Type.Object({ trackingNumber: Type.String() }) } }))
    .type.toRaiseError(/Property 'address' is missing/)
})

test('buildOrderSchemas types its schemas with the custom field schemas it is given', () => {
  const built = buildOrderSchemas({ statuses: ['new'], maxItems: 5, maxPageSize: 5, customFields: { order: Shipping, item: Gift } })
  expect(staticOf(built.Order)).type.toBe<Order>()
  expect(staticOf(built.CreateOrderBody)).type.toBe<CreateOrderInput>()
  expect(staticOf(built.UpdateOrderStatusBody)).type.toBe<UpdateOrderStatusInput>()
})
