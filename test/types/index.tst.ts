// Type tests of the public API, run by tstyche: what a host app written in TypeScript relies on.
import Fastify, { type FastifyRequest } from 'fastify'
import { expect, test } from 'tstyche'
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

test('register accepts the options and rejects a misspelt one', () => {
  expect(app.register(orderPlugin, { storage: memoryStorage(), maxPageSize: 50, prefix: '/api' })).type.not.toRaiseError()
  expect(app.register(orderPlugin)).type.not.toRaiseError()
  expect(app.register(orderPlugin, { maxPagesize: 1 })).type.toRaiseError(/'maxPagesize' does not exist/)
  expect(app.register(orderPlugin, { maxItems: '10' })).type.toRaiseError(/'string' is not assignable to type 'number'/)
})

test('app.orders is the typed service', () => {
  expect(app.orders).type.toBe<OrderService>()
  expect(app.orders.create(null as unknown as CreateOrderInput)).type.toBe<Promise<Order>>()
  expect(app.orders.list()).type.toBe<Promise<OrderPage>>()
  expect(app.orders.updateStatus({ id: 'o', status: 'paid' })).type.toBe<Promise<Order>>()
  expect(app.orders.create).type.not.toBeCallableWith({ customerId: 'c', currency: 'EUR' })
  app.orders.on('statusChanged', ({ order, from, to }) => {
    expect(order).type.toBe<Order>()
    expect(from).type.toBe<string>()
    expect(to).type.toBe<string>()
  })
  expect(app.orders.on).type.not.toBeCallableWith('deleted', () => {})
})

test('orders carry a number and, when given, the client\'s reference; both are filters', () => {
  expect<Order['number']>().type.toBe<number>()
  expect<Order['reference']>().type.toBe<string | undefined>()
  expect<CreateOrderInput['reference']>().type.toBe<string | undefined>()
  expect<CreateOrderInput>().type.not.toHaveProperty('number')
  expect<NonNullable<ListOrdersQuery['filter']>['number']>().type.toBe<number | undefined>()
  expect<NonNullable<ListOrdersQuery['filter']>['reference']>().type.toBe<string | undefined>()
})

test('an order\'s store, a filter by it, and who made each change are typed; a scope names a store and an actor', () => {
  expect<Order['store']>().type.toBe<string | undefined>()
  expect<CreateOrderInput['store']>().type.toBe<string | undefined>()
  expect<NonNullable<ListOrdersQuery['filter']>['store']>().type.toBe<string | undefined>()
  expect<Order['statusHistory'][number]['by']>().type.toBe<string | undefined>()
  expect<OrderScope>().type.toBe<{ customerId?: string, store?: string, actor?: string }>()
  expect(app.orders.list({}, { scope: { store: 'eu', actor: 'staff_7' } })).type.toBe<Promise<OrderPage>>()
  expect(app.orders.list).type.not.toBeCallableWith({}, { scope: { store: 7 } })
  expect<Authorize>().type.toBeAssignableFrom(() => ({ store: 'eu', actor: 'staff_7' }))
})

test('withTransaction gives the same calls on the host\'s client', () => {
  const calls = app.orders.withTransaction({ query: async () => ({ rows: [] }) })
  expect(calls).type.toBe<Pick<OrderService, 'create' | 'list' | 'updateStatus'>>()
  expect(calls.create(null as unknown as CreateOrderInput)).type.toBe<Promise<Order>>()
  expect(calls).type.not.toHaveProperty('on')
  expect(app.orders.withTransaction).type.not.toBeCallableWith({})
})

test('withTransaction takes the mysql2/promise connection of a transaction', () => {
  expect(app.orders.withTransaction).type.toBeCallableWith(null as unknown as PoolConnection)
})

test('request and response types come from the TypeBox schemas', () => {
  expect<Order>().type.toBe<Static<typeof OrderSchema>>()
  expect<CreateOrderInput>().type.toBe<Static<typeof CreateOrderBodySchema>>()
  expect<Order['total']>().type.toBe<number>()
  expect<Order['metadata']>().type.toBe<Record<string, string>>()
  expect<CreateOrderInput>().type.not.toHaveProperty('total')
  expect<ListOrdersQuery['order']>().type.toBe<'asc' | 'desc' | undefined>()
  expect<UpdateOrderStatusInput>().type.toHaveProperty('expectedVersion')
  expect<OrderPage['nextCursor']>().type.toBe<string | null>()
})

test('without declared custom fields, orders and inputs have no customFields', () => {
  expect<Order>().type.not.toHaveProperty('customFields')
  expect<OrderItem>().type.not.toHaveProperty('customFields')
  expect<CreateOrderInput>().type.not.toHaveProperty('customFields')
  expect<CreateOrderInput['items'][number]>().type.not.toHaveProperty('customFields')
  expect<UpdateOrderStatusInput>().type.not.toHaveProperty('customFields')
  expect(app.orders.create({ customerId: 'c', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 1 }], customFields: {} }))
    .type.toRaiseError(/'customFields' does not exist/)
})

test('the customFields option takes object schemas', () => {
  const Gift = Type.Object({ giftNote: Type.String() })
  expect(app.register(orderPlugin, { customFields: { order: Type.Object({ taxId: Type.String() }), item: Gift } })).type.not.toRaiseError()
  expect(app.register(orderPlugin, { customFields: { order: Type.String() } })).type.toRaiseError()
  expect(app.register(orderPlugin, { customFields: { orders: Gift } })).type.toRaiseError(/'orders' does not exist/)
})

test('a storage adapter implements OrderStorage', () => {
  expect<OrderStorage>().type.toBeAssignableFrom(memoryStorage())
  expect(memoryStorage().listEvents).type.not.toBe<undefined>()
  expect<OrderPluginOptions['storage']>().type.toBe<OrderStorage | undefined>()
  const incomplete = { get: async () => undefined }
  expect<OrderStorage>().type.not.toBeAssignableFrom(incomplete)
})

test('authorize returns a scope, a boolean or nothing, sync or async', () => {
  expect<Authorize>().type.toBeAssignableFrom((_request: FastifyRequest) => ({ customerId: 'cus_42' }))
  expect<Authorize>().type.toBeAssignableFrom(async () => false)
  expect<Authorize>().type.toBeAssignableFrom(() => {})
  expect<Authorize>().type.not.toBeAssignableFrom(() => 'cus_42')
})

test('errors and the default workflow are exported values', () => {
  expect(new codes.ORDER_NOT_FOUND('o')).type.toHaveProperty('statusCode')
  expect(defaultWorkflow.initial).type.toBe<'pending'>()
})

test('the event feed and subscriptions are typed, and an event narrows on its type', () => {
  expect(app.orders.listEvents()).type.toBe<Promise<EventPage>>()
  expect(app.orders.listEvents({ after: 'id', limit: 10 })).type.toBe<Promise<EventPage>>()
  expect(app.orders.listEvents).type.not.toBeCallableWith({ cursor: 'id' })
  expect(app.orders.subscriptions()).type.toBe<SubscriptionStatus[]>()
  app.orders.subscribe('fulfilment', async (event) => {
    expect(event).type.toBe<OrderEvent>()
    expect(event.order).type.toBe<Order>()
    if (event.type === 'statusChanged') expect(event.from).type.toBe<string>()
    else expect(event).type.not.toHaveProperty('from')
  }, { from: 'start', pollInterval: 500 })
  expect(app.orders.subscribe).type.not.toBeCallableWith('s', () => {}, { from: 'beginning' })
  expect(app.orders.subscribe).type.not.toBeCallableWith('s', () => {}, { pollIntervall: 5 })
  app.orders.subscribe('mails', async (_event, { signal }) => {
    expect(signal).type.toBe<AbortSignal>()
  }, { timeout: 5000 })
  expect(app.orders.subscribe).type.not.toBeCallableWith('s', () => {}, { timeout: '5s' })
})

test('deliveries that keep up: concurrency, a retry schedule, dead letters and the lag are typed', () => {
  const handler = webhook({ url: 'https://erp.example/hooks', secret: 'whsec_x', addresses: 'public' })
  expect(webhook).type.not.toBeCallableWith({ url: 'https://erp.example/hooks', secret: 'whsec_x', addresses: 'private' })
  expect(app.orders.subscribe('erp', handler, { concurrency: 32, retry: { schedule: webhookRetrySchedule } })).type.toBe<OrderService>()
  expect(app.orders.subscribe).type.toBeCallableWith('s', handler, { retry: 'forever' })
  expect(app.orders.subscribe).type.not.toBeCallableWith('s', handler, { retry: 'never' })
  expect(app.orders.subscribe).type.not.toBeCallableWith('s', handler, { concurrency: '32' })
  expect(app.orders.deadLetters('erp', { limit: 10, after: 'id' })).type.toBe<Promise<DeadLetterPage>>()
  expect(app.orders.redeliver('erp', { eventIds: ['id'] })).type.toBe<Promise<{ count: number }>>()
  expect(app.orders.deadLetters).type.not.toBeCallableWith('erp', { cursor: 'x' })
  const [status] = app.orders.subscriptions()
  expect(status!.lag).type.toBe<{ events: number, oldestAt: string | null }>()
  expect(status!.inFlight).type.toBe<number>()
})
