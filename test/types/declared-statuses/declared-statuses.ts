// Type tests of order statuses typed from a workflow declared `as const` by module augmentation, in a
// program of their own: an augmentation is global, and the type tests beside this folder check the
// types without one. 'fastify-order' resolves to the built package, as it does in a host app, whose
// declarations are checked in full (skipLibCheck off). Compile-time assertions (expect-type), checked
// after the build by `npm run test:hosts` (tsc -b, with the host apps); never run.
// Each `// @ts-expect-error` covers the one line after it: that line must not compile, for the reason given.
import Fastify from 'fastify'
import { expectTypeOf } from 'expect-type'
import orderPlugin, {
  defaultWorkflow, type CreateOrderInput, type EventPage, type ListOrdersFilter, type Order, type OrderEvent, type OrderMove,
  type OrderPage, type OrderStatus, type StatusChange, type TransitionGuard, type UpdateOrderStatusInput, type WorkflowGuards
} from 'fastify-order'
import { webhook } from 'fastify-order/webhooks'

const shop = {
  initial: 'new',
  transitions: { new: ['paid', 'void'], paid: ['shipped'], shipped: [], void: [] }
} as const

declare module 'fastify-order' {
  interface OrderStatuses { workflow: typeof shop }
}

type ShopStatus = 'new' | 'paid' | 'shipped' | 'void'
const app = Fastify()
const input: CreateOrderInput = { customerId: 'c', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] }

// an order's status and those of its history are the workflow's
expectTypeOf<OrderStatus>().toEqualTypeOf<ShopStatus>()
expectTypeOf<Order['status']>().toEqualTypeOf<ShopStatus>()
expectTypeOf<StatusChange['status']>().toEqualTypeOf<ShopStatus>()
expectTypeOf<Order['statusHistory'][number]['status']>().toEqualTypeOf<ShopStatus>()

// app.orders answers with them: create, list, updateStatus and the calls of a host transaction
expectTypeOf(app.orders.create(input)).resolves.toHaveProperty('status').toEqualTypeOf<ShopStatus>()
expectTypeOf(app.orders.list()).resolves.toEqualTypeOf<OrderPage>()
expectTypeOf<OrderPage['items'][number]['status']>().toEqualTypeOf<ShopStatus>()
expectTypeOf(app.orders.updateStatus({ id: 'o', status: 'paid' })).resolves.toHaveProperty('status').toEqualTypeOf<ShopStatus>()
const calls = app.orders.withTransaction({ query: async () => ({ rows: [] }) })
expectTypeOf(calls.create(input)).resolves.toHaveProperty('status').toEqualTypeOf<ShopStatus>()
async function shipped (id: string): Promise<boolean> {
  const order = await app.orders.updateStatus({ id, status: 'shipped' })
  // @ts-expect-error 'payed' is not a status of the workflow
  return order.status === 'payed' || order.statusHistory.some(({ status }) => status === 'paid')
}

// a move or a filter names a status of the workflow; a typo does not compile
expectTypeOf<UpdateOrderStatusInput['status']>().toEqualTypeOf<ShopStatus>()
// @ts-expect-error 'payed' is not a status of the workflow
expectTypeOf(app.orders.updateStatus).toBeCallableWith({ id: 'o', status: 'payed' })
expectTypeOf<NonNullable<ListOrdersFilter['status']>>().toEqualTypeOf<ShopStatus | ShopStatus[]>()
// @ts-expect-error 'payed' is not a status of the workflow
expectTypeOf(app.orders.list).toBeCallableWith({ filter: { status: ['paid', 'payed'] } })

// events and listeners carry them
expectTypeOf<OrderEvent['order']['status']>().toEqualTypeOf<ShopStatus>()
expectTypeOf<Extract<OrderEvent, { type: 'statusChanged' }>['from']>().toEqualTypeOf<ShopStatus>()
expectTypeOf<EventPage['items'][number]['order']['status']>().toEqualTypeOf<ShopStatus>()
expectTypeOf<OrderMove['from']>().toEqualTypeOf<ShopStatus>()
app.orders.on('statusChanged', ({ order, from, to }) => {
  expectTypeOf(order.status).toEqualTypeOf<ShopStatus>()
  expectTypeOf(from).toEqualTypeOf<ShopStatus>()
  expectTypeOf(to).toEqualTypeOf<ShopStatus>()
  // @ts-expect-error 'payed' is not a status of the workflow
  if (to === 'payed') app.log.info(order.id)
})
app.orders.on('created', order => { expectTypeOf(order.status).toEqualTypeOf<ShopStatus>() })
app.orders.subscribe('erp', async event => {
  expectTypeOf(event.order.status).toEqualTypeOf<ShopStatus>()
  if (event.type === 'statusChanged') expectTypeOf(event.from).toEqualTypeOf<ShopStatus>()
})
app.orders.subscribe('hooks', webhook({ url: 'https://erp.example/hooks', secret: `whsec_${'A'.repeat(32)}` }))

// guards see the order at the move's from, its history in the workflow's statuses
const guards: WorkflowGuards<typeof shop> = {
  shipped: ({ order }) => {
    expectTypeOf(order.status).toEqualTypeOf<'paid'>()
    // @ts-expect-error 'payed' is not a status of the workflow
    return order.statusHistory.some(({ status }) => status === 'payed')
  }
}
// a guard typed without a workflow has the declared statuses
const refusing: TransitionGuard = ({ order, from, to }) => {
  expectTypeOf(order.status).toEqualTypeOf<ShopStatus>()
  expectTypeOf(from).toEqualTypeOf<ShopStatus>()
  return to !== 'void'
}

// the workflow option is the declared one: another workflow does not compile
app.register(orderPlugin, { workflow: { ...shop, guards: { ...guards, void: refusing } } })
// @ts-expect-error the default workflow is not the declared one
app.register(orderPlugin, { workflow: defaultWorkflow })

export { shipped }
