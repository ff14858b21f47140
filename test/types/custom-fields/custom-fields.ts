// Type tests of custom fields declared by module augmentation, in a program of their own: an
// augmentation is global, and the type tests beside this folder check the types without one.
// 'fastify-order' resolves to the built package, as it does in a host app. Compile-time assertions
// (expect-type), checked after the build by `npm run test:hosts` (tsc -b, with the host apps); never run.
// Each `// @ts-expect-error` covers the one line after it: that line must not compile, for the reason given.
import Fastify from 'fastify'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { expectTypeOf } from 'expect-type'
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

// orders and items carry the declared custom fields
// Optional: orders stored before the option was set have none.
expectTypeOf<Order['customFields']>().toEqualTypeOf<ShippingFields | undefined>()
expectTypeOf<OrderItem['customFields']>().toEqualTypeOf<GiftFields | undefined>()
expectTypeOf<OrderPage['items'][number]>().toEqualTypeOf<Order>()
app.orders.on('created', order => { expectTypeOf(order.customFields).toEqualTypeOf<ShippingFields | undefined>() })
app.orders.on('statusChanged', ({ order }) => { expectTypeOf(order.items[0]!.customFields).toEqualTypeOf<GiftFields | undefined>() })

// a create must carry custom fields whose schema has required keys, with the declared types
expectTypeOf<CreateOrderInput['customFields']>().toEqualTypeOf<ShippingFields>()
expectTypeOf(app.orders.create({ customerId: 'c', currency: 'EUR', items, customFields: { address } })).toEqualTypeOf<Promise<Order>>()
expectTypeOf(app.orders.create).toBeCallableWith({ customerId: 'c', currency: 'EUR', items: [{ ...items[0]!, customFields: { giftNote: 'hi' } }], customFields: { address } })
// @ts-expect-error customFields are missing
expectTypeOf(app.orders.create).toBeCallableWith({ customerId: 'c', currency: 'EUR', items })
// @ts-expect-error 'number' is not assignable to type 'string'
app.orders.create({ customerId: 'c', currency: 'EUR', items, customFields: { address: { ...address, city: 69 } } })
// @ts-expect-error 'trackingNumbr' does not exist
app.orders.create({ customerId: 'c', currency: 'EUR', items, customFields: { address, trackingNumbr: 'T' } })
// @ts-expect-error an item's giftNote is a string
expectTypeOf(app.orders.create).toBeCallableWith({ customerId: 'c', currency: 'EUR', items: [{ ...items[0]!, customFields: { giftNote: 1 } }], customFields: { address } })

// item custom fields without required keys may be left out
expectTypeOf<CreateOrderInput['items'][number]['customFields']>().toEqualTypeOf<GiftFields | undefined>()

// updateOrderStatus takes a patch: null removes an optional key only
expectTypeOf<UpdateOrderStatusInput['customFields']>().toEqualTypeOf<CustomFieldsPatch<ShippingFields> | undefined>()
expectTypeOf(app.orders.updateStatus).toBeCallableWith({ id: 'o', status: 'shipped', customFields: { trackingNumber: 'T' } })
expectTypeOf(app.orders.updateStatus).toBeCallableWith({ id: 'o', status: 'shipped', customFields: { trackingNumber: null } })
// @ts-expect-error address is required: null cannot remove it
expectTypeOf(app.orders.updateStatus).toBeCallableWith({ id: 'o', status: 'shipped', customFields: { address: null } })
// @ts-expect-error trackingNumber is a string
expectTypeOf(app.orders.updateStatus).toBeCallableWith({ id: 'o', status: 'shipped', customFields: { trackingNumber: 42 } })
// @ts-expect-error 'carrier' is not a declared custom field
expectTypeOf(app.orders.updateStatus).toBeCallableWith({ id: 'o', status: 'shipped', customFields: { carrier: 'UPS' } })

// the customFields option takes schemas of the declared types
app.register(orderPlugin, { customFields: { order: Shipping, item: Gift } })
// @ts-expect-error Property 'address' is missing
app.register(orderPlugin, { customFields: { order: Type.Object({ trackingNumber: Type.String() }) } })

// buildOrderSchemas types its schemas with the custom field schemas it is given
const built = buildOrderSchemas({ statuses: ['new'], maxItems: 5, maxPageSize: 5, customFields: { order: Shipping, item: Gift } })
expectTypeOf(staticOf(built.Order)).toEqualTypeOf<Order>()
expectTypeOf(staticOf(built.CreateOrderBody)).toEqualTypeOf<CreateOrderInput>()
expectTypeOf(staticOf(built.UpdateOrderStatusBody)).toEqualTypeOf<UpdateOrderStatusInput>()
