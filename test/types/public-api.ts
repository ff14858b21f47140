// Type tests of the public API: what a host app written in TypeScript relies on. Compile-time assertions
// (expect-type), checked with the rest of the code by `npm run typecheck` (tsc --noEmit); never run.
// Each `// @ts-expect-error` covers the one line after it: that line must not compile, for the reason given.
import Fastify, { type FastifyRequest } from 'fastify'
import { expectTypeOf } from 'expect-type'
import orderPlugin, {
  codes, memoryStorage, defaultWorkflow, CreateOrderBodySchema, OrderSchema,
  type CreateOrderInput, type ListOrdersQuery, type Order, type OrderItem, type OrderPage, type OrderPluginOptions,
  type OrderService, type OrderStorage, type UpdateOrderStatusInput, type Authorize, type OrderEvent, type EventPage,
  type SubscriptionStatus, type OrderScope, type DeadLetterPage
} from '../../lib/index.js'
import { webhook, webhookRetrySchedule } from '../../lib/subscriptions/webhooks.js'
import { Type, type Static } from '@sinclair/typebox'
import type { PoolConnection } from 'mysql2/promise'

const app = Fastify()

// register accepts the options and rejects a misspelt one
app.register(orderPlugin, { storage: memoryStorage(), maxPageSize: 50, prefix: '/api' })
app.register(orderPlugin)
// @ts-expect-error 'maxPagesize' does not exist
app.register(orderPlugin, { maxPagesize: 1 })
// @ts-expect-error 'string' is not assignable to type 'number'
app.register(orderPlugin, { maxItems: '10' })

// app.orders is the typed service
expectTypeOf(app.orders).toEqualTypeOf<OrderService>()
expectTypeOf(app.orders.create(null as unknown as CreateOrderInput)).toEqualTypeOf<Promise<Order>>()
expectTypeOf(app.orders.list()).toEqualTypeOf<Promise<OrderPage>>()
expectTypeOf(app.orders.updateStatus({ id: 'o', status: 'paid' })).toEqualTypeOf<Promise<Order>>()
// @ts-expect-error items are missing
expectTypeOf(app.orders.create).toBeCallableWith({ customerId: 'c', currency: 'EUR' })
app.orders.on('statusChanged', ({ order, from, to }) => {
  expectTypeOf(order).toEqualTypeOf<Order>()
  expectTypeOf(from).toEqualTypeOf<string>()
  expectTypeOf(to).toEqualTypeOf<string>()
})
// @ts-expect-error there is no 'deleted' event
expectTypeOf(app.orders.on).toBeCallableWith('deleted', () => {})

// orders carry a number and, when given, the client's reference; both are filters
expectTypeOf<Order['number']>().toEqualTypeOf<number>()
expectTypeOf<Order['reference']>().toEqualTypeOf<string | undefined>()
expectTypeOf<CreateOrderInput['reference']>().toEqualTypeOf<string | undefined>()
expectTypeOf<CreateOrderInput>().not.toHaveProperty('number')
expectTypeOf<NonNullable<ListOrdersQuery['filter']>['number']>().toEqualTypeOf<number | undefined>()
expectTypeOf<NonNullable<ListOrdersQuery['filter']>['reference']>().toEqualTypeOf<string | undefined>()

// an order's store, a filter by it, and who made each change are typed; a scope names a store and an actor
expectTypeOf<Order['store']>().toEqualTypeOf<string | undefined>()
expectTypeOf<CreateOrderInput['store']>().toEqualTypeOf<string | undefined>()
expectTypeOf<NonNullable<ListOrdersQuery['filter']>['store']>().toEqualTypeOf<string | undefined>()
expectTypeOf<Order['statusHistory'][number]['by']>().toEqualTypeOf<string | undefined>()
expectTypeOf<OrderScope>().toEqualTypeOf<{ customerId?: string, store?: string, actor?: string }>()
expectTypeOf(app.orders.list({}, { scope: { store: 'eu', actor: 'staff_7' } })).toEqualTypeOf<Promise<OrderPage>>()
// @ts-expect-error a scope's store is a string
expectTypeOf(app.orders.list).toBeCallableWith({}, { scope: { store: 7 } })
expectTypeOf(() => ({ store: 'eu', actor: 'staff_7' })).toExtend<Authorize>()

// get finds one order by id, in the caller's scope
expectTypeOf(app.orders.get('ord_1')).toEqualTypeOf<Promise<Order>>()
expectTypeOf(app.orders.get).toBeCallableWith('ord_1', { scope: { customerId: 'cus_42' } })
// @ts-expect-error an id is a string
expectTypeOf(app.orders.get).toBeCallableWith(42)

// withTransaction gives the same calls on the host's client
const calls = app.orders.withTransaction({ query: async () => ({ rows: [] }) })
expectTypeOf(calls).toEqualTypeOf<Pick<OrderService, 'create' | 'list' | 'get' | 'updateStatus' | 'change'>>()
expectTypeOf(calls.create(null as unknown as CreateOrderInput)).toEqualTypeOf<Promise<Order>>()
expectTypeOf(calls).not.toHaveProperty('on')
// @ts-expect-error {} is neither a client nor a connection
expectTypeOf(app.orders.withTransaction).toBeCallableWith({})

// withTransaction takes the mysql2/promise connection of a transaction
expectTypeOf(app.orders.withTransaction).toBeCallableWith(null as unknown as PoolConnection)

// request and response types come from the TypeBox schemas
expectTypeOf<Order>().toEqualTypeOf<Static<typeof OrderSchema>>()
expectTypeOf<CreateOrderInput>().toEqualTypeOf<Static<typeof CreateOrderBodySchema>>()
expectTypeOf<Order['total']>().toEqualTypeOf<number>()
expectTypeOf<Order['metadata']>().toEqualTypeOf<Record<string, string>>()
expectTypeOf<CreateOrderInput>().not.toHaveProperty('total')
expectTypeOf<ListOrdersQuery['order']>().toEqualTypeOf<'asc' | 'desc' | undefined>()
expectTypeOf<UpdateOrderStatusInput>().toHaveProperty('expectedVersion')
expectTypeOf<OrderPage['nextCursor']>().toEqualTypeOf<string | null>()

// without declared custom fields, orders and inputs have no customFields
expectTypeOf<Order>().not.toHaveProperty('customFields')
expectTypeOf<OrderItem>().not.toHaveProperty('customFields')
expectTypeOf<CreateOrderInput>().not.toHaveProperty('customFields')
expectTypeOf<CreateOrderInput['items'][number]>().not.toHaveProperty('customFields')
expectTypeOf<UpdateOrderStatusInput>().not.toHaveProperty('customFields')
// @ts-expect-error 'customFields' does not exist
app.orders.create({ customerId: 'c', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 1 }], customFields: {} })

// the customFields option takes object schemas
const Gift = Type.Object({ giftNote: Type.String() })
app.register(orderPlugin, { customFields: { order: Type.Object({ taxId: Type.String() }), item: Gift } })
// @ts-expect-error a string schema is not an object schema
app.register(orderPlugin, { customFields: { order: Type.String() } })
// @ts-expect-error 'orders' does not exist
app.register(orderPlugin, { customFields: { orders: Gift } })

// a storage adapter implements OrderStorage
expectTypeOf(memoryStorage()).toExtend<OrderStorage>()
expectTypeOf(memoryStorage().listEvents).not.toEqualTypeOf<undefined>()
expectTypeOf<OrderPluginOptions['storage']>().toEqualTypeOf<OrderStorage | undefined>()
const incomplete = { get: async () => undefined }
expectTypeOf(incomplete).not.toExtend<OrderStorage>()

// authorize returns a scope, a boolean or nothing, sync or async
expectTypeOf((_request: FastifyRequest) => ({ customerId: 'cus_42' })).toExtend<Authorize>()
expectTypeOf(async () => false).toExtend<Authorize>()
expectTypeOf(() => {}).toExtend<Authorize>()
expectTypeOf(() => 'cus_42').not.toExtend<Authorize>()

// errors and the default workflow are exported values
expectTypeOf(new codes.ORDER_NOT_FOUND('o')).toHaveProperty('statusCode')
expectTypeOf(defaultWorkflow.initial).toEqualTypeOf<'pending'>()

// the event feed and subscriptions are typed, and an event narrows on its type
expectTypeOf(app.orders.listEvents()).toEqualTypeOf<Promise<EventPage>>()
expectTypeOf(app.orders.listEvents({ after: 'id', limit: 10 })).toEqualTypeOf<Promise<EventPage>>()
// @ts-expect-error the feed's query has no 'cursor'
expectTypeOf(app.orders.listEvents).toBeCallableWith({ cursor: 'id' })
expectTypeOf(app.orders.subscriptions()).toEqualTypeOf<SubscriptionStatus[]>()
app.orders.subscribe('fulfilment', async (event) => {
  expectTypeOf(event).toEqualTypeOf<OrderEvent>()
  expectTypeOf(event.order).toEqualTypeOf<Order>()
  if (event.type === 'statusChanged') expectTypeOf(event.from).toEqualTypeOf<string>()
  else expectTypeOf(event).not.toHaveProperty('from')
}, { from: 'start', pollInterval: 500 })
// @ts-expect-error from is 'now' or 'start', not 'beginning'
expectTypeOf(app.orders.subscribe).toBeCallableWith('s', () => {}, { from: 'beginning' })
// @ts-expect-error 'pollIntervall' does not exist
expectTypeOf(app.orders.subscribe).toBeCallableWith('s', () => {}, { pollIntervall: 5 })
app.orders.subscribe('mails', async (_event, { signal }) => {
  expectTypeOf(signal).toEqualTypeOf<AbortSignal>()
}, { timeout: 5000 })
// @ts-expect-error a timeout is a number of milliseconds
expectTypeOf(app.orders.subscribe).toBeCallableWith('s', () => {}, { timeout: '5s' })

// deliveries that keep up: concurrency, a retry schedule, dead letters and the lag are typed
const handler = webhook({ url: 'https://erp.example/hooks', secret: 'whsec_x', addresses: 'public' })
// @ts-expect-error addresses is 'any' or 'public', not 'private'
expectTypeOf(webhook).toBeCallableWith({ url: 'https://erp.example/hooks', secret: 'whsec_x', addresses: 'private' })
expectTypeOf(app.orders.subscribe('erp', handler, { concurrency: 32, retry: { schedule: webhookRetrySchedule } })).toEqualTypeOf<OrderService>()
expectTypeOf(app.orders.subscribe).toBeCallableWith('s', handler, { retry: 'forever' })
// @ts-expect-error retry is 'forever' or a schedule, not 'never'
expectTypeOf(app.orders.subscribe).toBeCallableWith('s', handler, { retry: 'never' })
// @ts-expect-error concurrency is a number
expectTypeOf(app.orders.subscribe).toBeCallableWith('s', handler, { concurrency: '32' })
expectTypeOf(app.orders.deadLetters('erp', { limit: 10, after: 'id' })).toEqualTypeOf<Promise<DeadLetterPage>>()
expectTypeOf(app.orders.redeliver('erp', { eventIds: ['id'] })).toEqualTypeOf<Promise<{ count: number }>>()
// @ts-expect-error the dead letters' query has no 'cursor'
expectTypeOf(app.orders.deadLetters).toBeCallableWith('erp', { cursor: 'x' })
const [status] = app.orders.subscriptions()
expectTypeOf(status!.lag).toEqualTypeOf<{ events: number, oldestAt: string | null }>()
expectTypeOf(status!.inFlight).toEqualTypeOf<number>()
