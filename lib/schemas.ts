// TypeBox schemas of the order routes: one object each serves validation, serialization, types and OpenAPI.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { defaultWorkflow } from './workflow.js'

/** What the schemas depend on: the plugin options that tighten them. */
export interface SchemaLimits {
  statuses: readonly string[]
  maxItems: number
  maxPageSize: number
}

export const DEFAULT_PAGE_SIZE = 20
export const MAX_IDS_FILTER = 100
export const DEFAULT_EVENT_PAGE = 100
export const MAX_EVENT_PAGE = 1000

const strict = { additionalProperties: false } as const

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 date-time in UTC with milliseconds' })
const OrderId = Type.String({ minLength: 1, maxLength: 128, description: 'Opaque order id chosen by the server' })
const CustomerId = Type.String({ minLength: 1, maxLength: 128 })
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 alphabetic code' })
const Reason = Type.String({ maxLength: 500 })

/** A string of the workflow's statuses; an enum keeps OpenAPI readable and rejects unknown statuses. */
const statusOf = (statuses: readonly string[]) =>
  Type.Unsafe<string>({ type: 'string', enum: [...statuses] })

const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 40 },
  additionalProperties: { type: 'string', maxLength: 500 },
  // OpenAPI 3.0 has no propertyNames: the documented form drops it, so the words carry the key limit.
  description: 'String to string: at most 50 keys of 1 to 40 characters, values of at most 500 characters'
})

export const OrderItemSchema = Type.Object({
  sku: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  quantity: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
  unitPrice: Type.Integer({ minimum: 0, maximum: 1e12, description: 'In the currency\'s minor unit (cents)' })
}, strict)

/** Builds every schema for one set of limits; the plugin calls it once at register. */
export function buildOrderSchemas ({ statuses, maxItems, maxPageSize }: SchemaLimits) {
  const Status = statusOf(statuses)

  const Order = Type.Object({
    id: OrderId,
    customerId: CustomerId,
    status: Status,
    currency: Currency,
    items: Type.Array(OrderItemSchema),
    total: Type.Integer({ minimum: 0, description: 'Sum of quantity × unitPrice in minor units' }),
    metadata: Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' } }),
    version: Type.Integer({ minimum: 1, description: '1 at creation, +1 at every status change' }),
    statusHistory: Type.Array(Type.Object({
      status: Status,
      at: Timestamp,
      reason: Type.Optional(Reason)
    }, strict)),
    createdAt: Timestamp,
    updatedAt: Timestamp
  }, { ...strict, $id: 'Order', title: 'Order' })

  // Nothing required, like Fastify's own error schema: an error from the host's authorize or hooks
  // (http-errors has no code) must keep its status, not fail serialization and become a 500.
  const OrderError = Type.Object({
    statusCode: Type.Optional(Type.Integer()),
    code: Type.Optional(Type.String({ description: 'ORDER_* or FST_* code; absent in some errors of the host' })),
    error: Type.Optional(Type.String()),
    message: Type.Optional(Type.String())
  }, { $id: 'OrderError', title: 'OrderError' })

  const CreateOrderBody = Type.Object({
    customerId: CustomerId,
    currency: Currency,
    items: Type.Array(OrderItemSchema, { minItems: 1, maxItems }),
    metadata: Type.Optional(Metadata)
  }, strict)

  const ListOrdersBody = Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize, default: Math.min(DEFAULT_PAGE_SIZE, maxPageSize) })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'nextCursor of the previous page' })),
    order: Type.Optional(Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['asc', 'desc'], default: 'desc' })),
    filter: Type.Optional(Type.Object({
      status: Type.Optional(Type.Union([Status, Type.Array(Status, { minItems: 1, uniqueItems: true })])),
      customerId: Type.Optional(CustomerId),
      ids: Type.Optional(Type.Array(OrderId, { minItems: 1, maxItems: MAX_IDS_FILTER })),
      createdFrom: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive' })),
      createdTo: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive' }))
    }, strict))
  }, strict)

  const OrderPage = Type.Object({
    items: Type.Array(Type.Unsafe<Static<typeof Order>>({ $ref: 'Order#' })),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' })
  })

  const UpdateOrderStatusBody = Type.Object({
    id: OrderId,
    status: Status,
    expectedVersion: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    reason: Type.Optional(Reason)
  }, strict)

  const IdempotencyHeaders = Type.Object({
    'idempotency-key': Type.Optional(Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7E]+$',
      description: 'Makes retries safe: the same key with the same body returns the first order'
    }))
  })

  // app.orders.listEvents' argument; there is no route for the feed.
  const ListEventsQuery = Type.Object({
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The id of an event listed earlier' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EVENT_PAGE, default: DEFAULT_EVENT_PAGE }))
  }, strict)

  return { Order, OrderError, CreateOrderBody, ListOrdersBody, OrderPage, UpdateOrderStatusBody, IdempotencyHeaders, ListEventsQuery }
}

export type OrderSchemas = ReturnType<typeof buildOrderSchemas>

/** The schemas as built for the default options (`defaultWorkflow`, `maxItems` 100, `maxPageSize` 100). */
export const schemas: OrderSchemas = buildOrderSchemas({
  statuses: Object.keys(defaultWorkflow.transitions),
  maxItems: 100,
  maxPageSize: 100
})

export const {
  Order: OrderSchema,
  OrderError: OrderErrorSchema,
  CreateOrderBody: CreateOrderBodySchema,
  ListOrdersBody: ListOrdersBodySchema,
  OrderPage: OrderPageSchema,
  UpdateOrderStatusBody: UpdateOrderStatusBodySchema
} = schemas

export type Order = Static<OrderSchemas['Order']>
export type OrderItem = Static<typeof OrderItemSchema>
export type StatusChange = Order['statusHistory'][number]
export type CreateOrderInput = Static<OrderSchemas['CreateOrderBody']>
export type ListOrdersQuery = Static<OrderSchemas['ListOrdersBody']>
export type ListOrdersFilter = NonNullable<ListOrdersQuery['filter']>
export type OrderPage = Static<OrderSchemas['OrderPage']>
export type UpdateOrderStatusInput = Static<OrderSchemas['UpdateOrderStatusBody']>
export type OrderErrorBody = Static<OrderSchemas['OrderError']>
export type ListEventsQuery = Static<OrderSchemas['ListEventsQuery']>
export type { TSchema }
