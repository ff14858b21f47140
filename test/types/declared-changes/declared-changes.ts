// Type tests of changes declared on by module augmentation, in a program of their own: an augmentation
// is global, and the type tests beside this folder check the types without one. 'fastify-order' resolves
// to the built package, as it does in a host app. Compile-time assertions (expect-type), checked after the
// build by `npm run test:hosts`; never run. Each `// @ts-expect-error` covers the one line after it.
import Fastify from 'fastify'
import { expectTypeOf } from 'expect-type'
import orderPlugin, { type ListOrdersQuery, type Order, type OrderChange, type OrderPayment, type OrderWithChanges } from 'fastify-order'

declare module 'fastify-order' {
  interface OrderChanges { on: true }
}

const app = Fastify()
await app.register(orderPlugin, { changes: { route: true } })
const body = { customerId: 'cus_42', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] }

// every order has the ledger and its lines their counters
expectTypeOf<Order>().toEqualTypeOf<OrderWithChanges>()
expectTypeOf<Order['paid']>().toEqualTypeOf<number>()
expectTypeOf<Order['balance']>().toEqualTypeOf<number>()
expectTypeOf<Order['payments']>().toEqualTypeOf<OrderPayment[]>()
expectTypeOf<Order['changes']>().toEqualTypeOf<OrderChange[]>()
expectTypeOf<Order['items'][number]['cancelled']>().toEqualTypeOf<number | undefined>()

// on every method, with no cast
const created = await app.orders.create(body)
expectTypeOf(created.balance).toEqualTypeOf<number>()
expectTypeOf((await app.orders.updateStatus({ id: created.id, status: 'paid' })).payments).toEqualTypeOf<OrderPayment[]>()
expectTypeOf((await app.orders.list()).items[0]!).toEqualTypeOf<Order>()
expectTypeOf((await app.orders.get(created.id)).paid).toEqualTypeOf<number>()
expectTypeOf(await app.orders.change({ id: created.id, actions: [{ type: 'recordPayment', amount: 100, reference: 'pi_1' }] })).toEqualTypeOf<Order>()
expectTypeOf((await app.orders.withTransaction({ query: async () => ({ rows: [] }) }).list()).items[0]!.balance).toEqualTypeOf<number>()

// on listeners and subscriptions
app.orders.on('created', order => { expectTypeOf(order.balance).toEqualTypeOf<number>() })
app.orders.on('statusChanged', ({ order }) => { expectTypeOf(order.changes).toEqualTypeOf<OrderChange[]>() })
app.orders.on('changed', event => { expectTypeOf(event.order.paid).toEqualTypeOf<number>() })
app.orders.subscribe('fulfilment', async event => { expectTypeOf(event.order.balance).toEqualTypeOf<number>() })
expectTypeOf((await app.orders.listEvents()).items[0]!.order.payments).toEqualTypeOf<OrderPayment[]>()

// filter.balance is typed on list
expectTypeOf(app.orders.list).toBeCallableWith({ filter: { balance: 'owed' } })
expectTypeOf<NonNullable<ListOrdersQuery['filter']>['balance']>().toEqualTypeOf<'due' | 'settled' | 'owed' | undefined>()
// @ts-expect-error a balance filter is due, settled or owed
expectTypeOf(app.orders.list).toBeCallableWith({ filter: { balance: 'negative' } })
