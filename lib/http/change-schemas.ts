// TypeBox schemas of changes after placement: the actions, the ledger an order gains with changes on, the changeOrder body.
import { Type, type Static, type TSchema, type TUnion, type TUnsafe } from '@sinclair/typebox'
import { change as limits, order } from '../limits.js'

const strict = { additionalProperties: false } as const

const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 date-time in UTC with milliseconds' })
const Actor = Type.String({ minLength: 1, maxLength: order.actorLength, description: 'Who made the change, the actor of the caller\'s scope' })
const Reason = Type.String({ maxLength: order.reasonLength })
// Any index past the last line is the order's to refuse (409), not the schema's.
const LineIndex = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The line\'s position in `items`, from 0; lines are never removed' })
const Quantity = Type.Integer({ minimum: 1, maximum: order.maxQuantity })
const Amount = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'In the currency\'s minor unit (cents)' })
const PaymentReference = Type.String({ minLength: 1, maxLength: limits.paymentReferenceLength, description: 'The payment\'s or refund\'s id at its provider' })

/** A line as addItem takes it: the rules of a createOrder line (custom fields as the host's schemas add them). */
export const AddedItem = Type.Object({
  sku: Type.String({ minLength: 1, maxLength: order.skuLength }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: order.itemNameLength })),
  quantity: Quantity,
  unitPrice: Type.Integer({ minimum: 0, maximum: order.maxUnitPrice, description: 'In the currency\'s minor unit (cents)' })
}, strict)

/** The seven actions, addItem's line as `Item` gives it. */
function actionsOf<I extends TSchema> (Item: I) {
  return [
    Type.Object({ type: Type.Literal('addItem'), item: Item }, { ...strict, description: 'Appends a line' }),
    Type.Object({ type: Type.Literal('setQuantity'), index: LineIndex, quantity: Type.Integer({ minimum: 0, maximum: order.maxQuantity }) }, { ...strict, description: 'Sets the ordered quantity of a line, never below what was cancelled plus returned' }),
    Type.Object({ type: Type.Literal('setUnitPrice'), index: LineIndex, unitPrice: AddedItem.properties.unitPrice }, { ...strict, description: 'Reprices a line' }),
    Type.Object({ type: Type.Literal('cancelItem'), index: LineIndex, quantity: Quantity }, { ...strict, description: 'Cancels part or all of what is open on a line' }),
    Type.Object({ type: Type.Literal('returnItem'), index: LineIndex, quantity: Quantity }, { ...strict, description: 'Takes back part or all of what is open on a line' }),
    Type.Object({ type: Type.Literal('recordPayment'), amount: Amount, reference: PaymentReference }, { ...strict, description: 'Money received; skipped when the order has this reference as a payment of this amount' }),
    Type.Object({ type: Type.Literal('recordRefund'), amount: Amount, reference: PaymentReference }, { ...strict, description: 'Money given back, never above what was paid; skipped when the order has this reference as a refund of this amount' })
  ] as const
}

/** One action of a change, as its schema (`changeActionOf`) describes it. */
type ActionOf<I extends TSchema> = Static<TUnion<[...ReturnType<typeof actionsOf<I>>]>>

/**
 * The schema of an action, addItem's line as `I`. An interface, so that declarations name it rather than
 * spell its type out: the spelt-out form tsc 5 writes refers to a type parameter out of its scope, which
 * TypeScript 7 refuses in a host that checks the declarations.
 */
export interface ChangeActionSchemaOf<I extends TSchema> extends TUnsafe<ActionOf<I>> {}

/**
 * One action of a change, told apart by `type`: a oneOf with a discriminator, so a wrong action is
 * reported by the rules of its own type rather than of every type. An object first: ajv's
 * discriminator passes over a value that is not one (null, a number, an array) without a word.
 */
export function changeActionOf<I extends TSchema> (Item: I): ChangeActionSchemaOf<I> {
  return Type.Unsafe<ActionOf<I>>({ type: 'object', oneOf: [...actionsOf(Item)], discriminator: { propertyName: 'type' } })
}

/** An action of a change, without custom fields. */
export const ChangeActionSchema = changeActionOf(AddedItem)

/** An entry of an order's `payments`: money received or given back, in the order recorded. */
export const PaymentSchema = Type.Object({
  kind: Type.Union([Type.Literal('payment'), Type.Literal('refund')]),
  amount: Amount,
  reference: PaymentReference,
  at: Timestamp,
  by: Type.Optional(Actor)
}, strict)

/** An entry of an order's `changes`: one applied change, never rewritten, its actions as `Action` describes them. */
function orderChangeOf<A extends TSchema> (Action: A) {
  return Type.Object({
    version: Type.Integer({ minimum: 2, description: 'The order\'s version this change made' }),
    at: Timestamp,
    by: Type.Optional(Actor),
    reason: Type.Optional(Reason),
    actions: Type.Array(Action, { description: 'The actions applied, skipped ones left out' }),
    totalBefore: Type.Integer({ minimum: 0 }),
    totalAfter: Type.Integer({ minimum: 0 })
  }, strict)
}

/** An entry of an order's `changes`, without custom fields. */
export const OrderChangeSchema = orderChangeOf(ChangeActionSchema)

/** What a stored line gains with changes on: a quantity that may be 0, and its counters, left out while 0. */
export const LineCounters = {
  quantity: Type.Integer({ minimum: 0, maximum: order.maxQuantity, description: 'Ordered; 0 after a setQuantity to 0' }),
  cancelled: Type.Optional(Type.Integer({ minimum: 1, maximum: order.maxQuantity, description: 'Cancelled so far; absent while 0' })),
  returned: Type.Optional(Type.Integer({ minimum: 1, maximum: order.maxQuantity, description: 'Returned so far; absent while 0' }))
}

/** What an order gains with changes on, the lines of its addItem actions as `Item` describes them. */
export function ledgerOf<I extends TSchema> (Item: I) {
  return {
    paid: Type.Integer({ minimum: 0, description: 'Payments minus refunds, in minor units' }),
    balance: Type.Integer({ description: 'total − paid: above 0 the customer owes it, below 0 the shop owes it back' }),
    payments: Type.Array(PaymentSchema),
    changes: Type.Array(orderChangeOf(changeActionOf(Item)))
  }
}

/**
 * What an order changed or paid while changes were on keeps once they are off: its ledger, present
 * only on such an order.
 */
export function keptLedgerOf<I extends TSchema> (Item: I) {
  const { paid, balance, payments, changes } = ledgerOf(Item)
  return { paid: Type.Optional(paid), balance: Type.Optional(balance), payments: Type.Optional(payments), changes: Type.Optional(changes) }
}

/** getOrderList's `filter.balance`, with changes on. */
export const BalanceFilter = {
  balance: Type.Optional(Type.Unsafe<'due' | 'settled' | 'owed'>({ type: 'string', enum: ['due', 'settled', 'owed'], description: 'The sign of the balance: due (above 0), settled (0) or owed (below 0)' }))
}

/** changeOrder's body, addItem's line as `Item` gives it (createOrder's line). */
export function changeOrderBodyOf<I extends TSchema> (OrderId: TSchema, Item: I) {
  return Type.Object({
    id: OrderId as TUnsafe<string>,
    actions: Type.Array(changeActionOf(Item), { minItems: 1, maxItems: limits.maxActions, description: `1 to ${limits.maxActions} actions, applied in order, all or none` }),
    expectedVersion: Type.Optional(Type.Integer({ minimum: 1, maximum: order.maxVersion })),
    reason: Type.Optional(Reason),
    preview: Type.Optional(Type.Boolean({ description: 'true: answers the order as the change would leave it, and stores nothing' }))
  }, {
    ...strict,
    description: 'The example\'s `id` is made up: put the `id` createOrder answered (or one getOrderList lists) in its place.',
    examples: [{ id: '01a1ffc8468d0000b5bdf050f8a2fa9010a9950926dc3c21', actions: [{ type: 'setQuantity', index: 0, quantity: 1 }, { type: 'recordPayment', amount: 1250, reference: 'pi_3Nf' }], reason: 'one mug fewer' }]
  })
}
