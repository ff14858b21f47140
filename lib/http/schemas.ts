// TypeBox schemas of the order routes: one object each serves validation, serialization, types and OpenAPI.
import { Type, type Static, type TOptional, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { customFieldForms } from '../custom-fields/forms.js'
import { AddedItem, BalanceFilter, changeOrderBodyOf, ChangeActionSchema, keptLedgerOf, ledgerOf, LineCounters, OrderChangeSchema, PaymentSchema } from './change-schemas.js'
import type { CustomFieldsPatch, OrderCustomFields } from '../custom-fields/types.js'
import { order as limits, page, plugin, subscription } from '../limits.js'
import { defaultWorkflow } from '../orders/default-workflow.js'
import type { OrderStatus } from '../orders/statuses.js'

/** What the schemas depend on: the plugin options that tighten or extend them. */
export interface SchemaLimits<O extends TSchema | undefined = TSchema | undefined, I extends TSchema | undefined = TSchema | undefined, C extends boolean = boolean> {
  statuses: readonly string[]
  maxItems: number
  maxPageSize: number
  /** The `customFields` option: object schemas of the order's and each item's custom fields. */
  customFields?: { order?: O, item?: I }
  /** Whether the `changes` option is on: the order gains its ledger, lines their counters, pages `filter.balance`. */
  changes?: C
}

const strict = { additionalProperties: false } as const

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 date-time in UTC with milliseconds' })
const OrderId = Type.String({ minLength: 1, maxLength: limits.idLength, description: 'Opaque order id chosen by the server' })
const CustomerId = Type.String({ minLength: 1, maxLength: limits.customerIdLength })
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 alphabetic code' })
const Reason = Type.String({ maxLength: limits.reasonLength })
const OrderNumber = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Human order number chosen by the storage, unique within it' })
const VISIBLE_ASCII = '^[\\x21-\\x7E]+$'
const Reference = Type.String({
  minLength: 1,
  maxLength: limits.referenceLength,
  pattern: VISIBLE_ASCII,
  description: `The client's own key for the order (a cart id, a payment intent): 1 to ${limits.referenceLength} visible ASCII characters, unique per customer within a store`
})

/** A store's key: the scope's `store` keeps the same rule (lib/orders/scope.ts). */
export const StoreSchema = Type.String({
  minLength: 1,
  maxLength: limits.storeLength,
  pattern: '^[A-Za-z0-9_.-]+$',
  description: `The key of the store the order belongs to (a brand, a country, a channel): 1 to ${limits.storeLength} characters of A-Z, a-z, 0-9, "_", "." and "-"`
})
// Set by the scope's actor, never by a body: documented here, checked by the scope's rule (lib/orders/scope.ts).
const Actor = Type.String({ minLength: 1, maxLength: limits.actorLength, description: `Who made the change, the actor of the caller's scope: 1 to ${limits.actorLength} characters without control characters` })

/** The Idempotency-Key header. The rules check it themselves, so that it answers with its own code. */
export const IdempotencyKeySchema = Type.String({
  minLength: 1,
  maxLength: limits.idempotencyKeyLength,
  pattern: VISIBLE_ASCII,
  description: 'Makes retries safe: the same key with the same body returns the first order'
})

/**
 * A valid request of each route, documented as its body's example: Swagger UI sends it from "Try it
 * out". The move's id is an order the create made (the README's); its body's description says to put a real one in its place.
 */
export const requestExamples = {
  createOrder: { customerId: 'cus_42', currency: 'EUR', items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }], metadata: { channel: 'web' } },
  getOrderList: { limit: 10, filter: { customerId: 'cus_42' } },
  updateOrderStatus: { id: '01a1ffc8468d0000b5bdf050f8a2fa9010a9950926dc3c21', status: 'paid', expectedVersion: 1, reason: 'card captured' }
}

/**
 * A string of the workflow's statuses, typed with those of the workflow the host declared
 * (`OrderStatuses`), if it did. Named, so that declarations keep the name rather than the string it
 * is without a declaration.
 */
interface StatusSchema extends TUnsafe<OrderStatus> {}

/** A status schema: an enum keeps OpenAPI readable and rejects unknown statuses. */
const statusOf = (statuses: readonly string[]): StatusSchema =>
  Type.Unsafe<OrderStatus>({ type: 'string', enum: [...statuses] })

const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: limits.metadataKeys,
  propertyNames: { minLength: 1, maxLength: limits.metadataKeyLength },
  additionalProperties: { type: 'string', maxLength: limits.metadataValueLength },
  // OpenAPI 3.0 has no propertyNames: the documented form drops it, so the words carry the key limit.
  description: `String to string: at most ${limits.metadataKeys} keys of 1 to ${limits.metadataKeyLength} characters, values of at most ${limits.metadataValueLength} characters`
})

export const OrderItemSchema = Type.Object({
  sku: Type.String({ minLength: 1, maxLength: limits.skuLength }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: limits.itemNameLength })),
  quantity: Type.Integer({ minimum: 1, maximum: limits.maxQuantity }),
  unitPrice: Type.Integer({ minimum: 0, maximum: limits.maxUnitPrice, description: 'In the currency\'s minor unit (cents)' })
}, strict)

/** `customFields` of a stored order or item: optional, as orders stored before the option was set have none. */
type StoredCustomFields<S> = S extends TSchema ? { customFields: TOptional<S> } : {}
/** `customFields` of a create: required when the schema has required keys, otherwise it defaults to {}. */
type InputCustomFields<S> = S extends TSchema ? ({} extends Static<S> ? { customFields: TOptional<S> } : { customFields: S }) : {}
/** `customFields` of updateOrderStatus: a patch of the order's custom fields. */
type PatchCustomFields<S> = S extends TSchema ? { customFields: TOptional<TUnsafe<CustomFieldsPatch<Static<S>>>> } : {}

// The `customFields` property each schema gets, or none when the host gave no schema of that kind.
function storedCustomFields<S extends TSchema | undefined> (schema: S, name: 'order' | 'item') {
  return (schema === undefined ? {} : { customFields: Type.Optional(customFieldForms(schema, name).response) }) as StoredCustomFields<S>
}
function inputCustomFields<S extends TSchema | undefined> (schema: S, name: 'order' | 'item') {
  if (schema === undefined) return {} as InputCustomFields<S>
  const { strict, required } = customFieldForms(schema, name)
  const customFields: TSchema = required ? strict : Type.Optional(strict)
  return { customFields } as InputCustomFields<S>
}
function patchCustomFields<S extends TSchema | undefined> (schema: S) {
  return (schema === undefined ? {} : { customFields: Type.Optional(customFieldForms(schema, 'order').patch) }) as PatchCustomFields<S>
}

/** What changes add to a schema (`added`) only when they are on. */
type WithChanges<C extends boolean, T> = C extends true ? T : {}
function withChanges<C extends boolean, T> (changes: C, added: T) {
  return (changes ? added : {}) as WithChanges<C, T>
}

/**
 * What changes add to the order: with them on, the ledger. With them off, nothing; but the form the
 * routes serialize with (`served`) has the same parts optional, as an order changed while they were on
 * keeps them. The lines of its addItem actions are as stored.
 */
function ledgerFor<I extends TSchema | undefined, C extends boolean> (item: I, changes: C, served: boolean) {
  const Item = Type.Object({ ...AddedItem.properties, ...storedCustomFields(item, 'item') }, strict)
  return (changes ? ledgerOf(Item) : served ? keptLedgerOf(Item) : {}) as WithChanges<C, ReturnType<typeof ledgerOf<typeof Item>>>
}

/** The order as every route returns it; `served`: the form its answers are written with, see ledgerFor. */
function orderSchemaOf<O extends TSchema | undefined, I extends TSchema | undefined, C extends boolean> (Status: StatusSchema, order: O, item: I, changes: C, served = false) {
  return Type.Object({
    id: OrderId,
    number: OrderNumber,
    reference: Type.Optional(Reference),
    store: Type.Optional(StoreSchema),
    customerId: CustomerId,
    status: Status,
    currency: Currency,
    items: Type.Array(Type.Object({ ...OrderItemSchema.properties, ...withChanges(changes || served, LineCounters) as WithChanges<C, typeof LineCounters>, ...storedCustomFields(item, 'item') }, strict)),
    total: Type.Integer({ minimum: 0, description: changes ? 'Sum of open × unitPrice in minor units (open: quantity − cancelled − returned)' : 'Sum of quantity × unitPrice in minor units' }),
    metadata: Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' } }),
    ...storedCustomFields(order, 'order'),
    ...ledgerFor(item, changes, served),
    version: Type.Integer({ minimum: 1, description: changes ? '1 at creation, +1 at every status change and every change' : '1 at creation, +1 at every status change' }),
    statusHistory: Type.Array(Type.Object({
      status: Status,
      at: Timestamp,
      reason: Type.Optional(Reason),
      by: Type.Optional(Actor)
    }, strict)),
    createdAt: Timestamp,
    updatedAt: Timestamp
  }, { ...strict, $id: 'Order', title: 'Order' })
}

// Named, so that declarations refer to the order's type rather than spell it out (or get it wrong).
type OrderSchemaOf<O extends TSchema | undefined, I extends TSchema | undefined, C extends boolean> = ReturnType<typeof orderSchemaOf<O, I, C>>
interface OrderRef<O extends TSchema | undefined, I extends TSchema | undefined, C extends boolean> extends TUnsafe<Static<OrderSchemaOf<O, I, C>>> {}

/**
 * Builds every schema for one set of limits and custom fields; the plugin calls it once at register.
 * Hosts may call it with the same options to reuse the exact schemas (their Static types follow).
 */
export function buildOrderSchemas<O extends TSchema | undefined = undefined, I extends TSchema | undefined = undefined, C extends boolean = false> (
  { statuses, maxItems, maxPageSize, customFields = {}, changes = false as C }: SchemaLimits<O, I, C>
) {
  const Status = statusOf(statuses)
  const { order, item } = customFields as { order: O, item: I }
  const Order: OrderSchemaOf<O, I, C> = orderSchemaOf(Status, order, item, changes)
  // What the routes write an order with: with changes off, the ledger an order kept from when they were on.
  const ServedOrder: typeof Order = changes ? Order : orderSchemaOf(Status, order, item, changes, true)
  const InputItem = Type.Object({ ...OrderItemSchema.properties, ...inputCustomFields(item, 'item') }, strict)
  // The examples keep within these limits; no create example when custom fields need values only the host knows.
  const fieldsRequired = (order !== undefined && customFieldForms(order, 'order').required) || (item !== undefined && customFieldForms(item, 'item').required)
  const { createOrder, getOrderList, updateOrderStatus } = requestExamples

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
    items: Type.Array(InputItem, { minItems: 1, maxItems }),
    metadata: Type.Optional(Metadata),
    reference: Type.Optional(Reference),
    store: Type.Optional(StoreSchema),
    ...inputCustomFields(order, 'order')
  }, { ...strict, ...(!fieldsRequired && { examples: [createOrder] }) })

  const ListOrdersBody = Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize, default: Math.min(page.defaultSize, maxPageSize) })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: page.cursorLength, description: 'nextCursor of the previous page' })),
    order: Type.Optional(Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['asc', 'desc'], default: 'desc' })),
    filter: Type.Optional(Type.Object({
      status: Type.Optional(Type.Union([Status, Type.Array(Status, { minItems: 1, uniqueItems: true })])),
      customerId: Type.Optional(CustomerId),
      ids: Type.Optional(Type.Array(OrderId, { minItems: 1, maxItems: page.maxIds })),
      number: Type.Optional(OrderNumber),
      reference: Type.Optional(Reference),
      store: Type.Optional(StoreSchema),
      createdFrom: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive' })),
      createdTo: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive' })),
      ...withChanges(changes, BalanceFilter)
    }, strict))
  }, { ...strict, examples: [{ ...getOrderList, limit: Math.min(getOrderList.limit, maxPageSize) }] })

  const OrderPage = Type.Object({
    items: Type.Array(Type.Unsafe({ $ref: 'Order#' }) as OrderRef<O, I, C>),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'null on the last page' })
  })

  const UpdateOrderStatusBody = Type.Object({
    id: OrderId,
    status: Status,
    expectedVersion: Type.Optional(Type.Integer({ minimum: 1, maximum: limits.maxVersion })),
    reason: Type.Optional(Reason),
    ...patchCustomFields(order)
  }, {
    ...strict,
    // Shown above the body in Swagger UI's "Try it out", where the example's id would answer 404 as it stands.
    description: 'The example\'s `id` is made up: put the `id` createOrder answered (or one getOrderList lists) in its place.',
    examples: [{ ...updateOrderStatus, status: statuses.includes('paid') ? 'paid' : statuses[0] }]
  })

  const IdempotencyHeaders = Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKeySchema) })

  // app.orders.change's input, and changeOrder's body with changes: { route: true }.
  const ChangeOrderBody = changeOrderBodyOf(OrderId, Type.Object({ ...AddedItem.properties, ...inputCustomFields(item, 'item') }, strict))

  // app.orders.listEvents' argument; there is no route for the feed.
  const ListEventsQuery = Type.Object({
    after: Type.Optional(Type.String({ minLength: 1, maxLength: limits.idLength, description: 'The id of an event listed earlier' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: page.maxEvents, default: page.defaultEvents }))
  }, strict)

  // app.orders.deadLetters' and redeliver's second arguments.
  const DeadLettersQuery = Type.Object({
    after: Type.Optional(Type.String({ minLength: 1, maxLength: limits.idLength, description: 'The event id of a dead letter listed earlier' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: subscription.maxDeadLetters, default: subscription.defaultDeadLetters }))
  }, strict)
  const RedeliverQuery = Type.Object({
    eventIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: limits.idLength }), {
      maxItems: subscription.maxDeadLetters,
      description: 'The events of the dead letters to put back; all of them when absent'
    }))
  }, strict)

  return { Order, ServedOrder, OrderError, CreateOrderBody, ListOrdersBody, OrderPage, UpdateOrderStatusBody, ChangeOrderBody, IdempotencyHeaders, ListEventsQuery, DeadLettersQuery, RedeliverQuery }
}

/** The schema of the custom fields the host declared in `OrderCustomFields`, or undefined. */
type DeclaredSchema<K extends 'order' | 'item'> = OrderCustomFields extends { [P in K]: infer T } ? TUnsafe<T> : undefined

/**
 * Declared once by a host that turns the `changes` option on, by module augmentation as custom fields
 * are (the augmenting file must import 'fastify-order'):
 *
 * ```ts
 * declare module 'fastify-order' {
 *   interface OrderChanges { on: true }
 * }
 * ```
 *
 * Then `Order`, and so every method, listener and subscription of `app.orders`, has the ledger and the
 * lines their counters, and `filter.balance` is in `ListOrdersQuery`. Left empty, they have none.
 */
export interface OrderChanges {}

/** Whether the host declared changes on in `OrderChanges`. */
type DeclaredChanges = OrderChanges extends { on: true } ? true : false

/** The schemas' types: by default with the custom fields the host declared in `OrderCustomFields`, and the ledger if it declared changes on. */
export type OrderSchemas<O extends TSchema | undefined = DeclaredSchema<'order'>, I extends TSchema | undefined = DeclaredSchema<'item'>, C extends boolean = DeclaredChanges> =
  ReturnType<typeof buildOrderSchemas<O, I, C>>

/** The schemas as built for the default options (`defaultWorkflow`, `maxItems` 100, `maxPageSize` 100, no custom fields). */
export const schemas: OrderSchemas<undefined, undefined, false> = buildOrderSchemas({
  statuses: Object.keys(defaultWorkflow.transitions),
  maxItems: plugin.defaultMaxItems,
  maxPageSize: plugin.defaultMaxPageSize
})

export const {
  Order: OrderSchema,
  OrderError: OrderErrorSchema,
  CreateOrderBody: CreateOrderBodySchema,
  ListOrdersBody: ListOrdersBodySchema,
  OrderPage: OrderPageSchema,
  UpdateOrderStatusBody: UpdateOrderStatusBodySchema,
  ChangeOrderBody: ChangeOrderBodySchema
} = schemas

export { ChangeActionSchema, OrderChangeSchema, PaymentSchema }

export type Order = Static<OrderSchemas['Order']>
/** An order as the plugin hands it to the storage's `create`: the storage chooses its `number`. */
export type NewOrder = Omit<Order, 'number'>
export type OrderItem = Order['items'][number]
export type StatusChange = Order['statusHistory'][number]
export type CreateOrderInput = Static<OrderSchemas['CreateOrderBody']>
export type ListOrdersQuery = Static<OrderSchemas['ListOrdersBody']>
export type ListOrdersFilter = NonNullable<ListOrdersQuery['filter']>
/**
 * The filter of a page as storages read it: the request's filter with `status` as a sorted list of
 * `statuses`, `ids` sorted without repeats and the created range as stored instants. Every other
 * filter of the request schema comes through as it is, an order property matched by equality, so a
 * new filter needs no code between the schema and the storage.
 */
export type PageFilter = Omit<ListOrdersFilter, 'status' | 'ids'> & {
  /** Any of these statuses. */
  statuses?: readonly string[]
  /** Any of these ids. */
  ids?: readonly string[]
}
export type OrderPage = Static<OrderSchemas['OrderPage']>
export type UpdateOrderStatusInput = Static<OrderSchemas['UpdateOrderStatusBody']>
/** The order with the `changes` option on: lines with their counters, `paid`, `balance`, `payments` and `changes`. */
export type OrderWithChanges = Static<OrderSchemas<DeclaredSchema<'order'>, DeclaredSchema<'item'>, true>['Order']>
/** One action of a change: a tagged value, told apart by `type`. */
export type ChangeAction = Static<typeof ChangeActionSchema>
export type ChangeOrderInput = Static<OrderSchemas['ChangeOrderBody']>
/** An entry of `order.payments`. */
export type OrderPayment = Static<typeof PaymentSchema>
/** An entry of `order.changes`. */
export type OrderChange = Static<typeof OrderChangeSchema>
export type OrderErrorBody = Static<OrderSchemas['OrderError']>
export type ListEventsQuery = Static<OrderSchemas['ListEventsQuery']>
export type DeadLettersQuery = Static<OrderSchemas['DeadLettersQuery']>
export type RedeliverQuery = Static<OrderSchemas['RedeliverQuery']>
export type { TSchema }
