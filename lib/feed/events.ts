// The event every stored change also writes: its shape, and how the plugin makes one.
import { newEventId } from '../orders/ids.js'
import type { NewOrder, Order } from '../http/schemas.js'
import type { OrderStatus } from '../orders/statuses.js'

interface EventFields {
  /** Unique; consumers deduplicate on it. A UUID, the `id` column Debezium's outbox router reads. */
  id: string
  /** When the change was stored: the order's `updatedAt`. */
  at: string
  /** The order as this change stored it; `order.version` is the per-order sequence. */
  order: Order
}

export interface OrderCreatedEvent extends EventFields {
  type: 'created'
}

export interface OrderStatusChangedEvent extends EventFields {
  type: 'statusChanged'
  /** The status before the move. */
  from: OrderStatus
}

/** An applied change after placement (section 17, with the `changes` option on). */
export interface OrderChangedEvent extends EventFields {
  type: 'changed'
  /** The change this event stored: its entry of `order.changes`. A storage keeps it as JSON, unread. */
  change: OrderChangeRecord
}

/** One entry of `order.changes`, as a storage sees it: plain JSON it stores and returns unchanged. */
export interface OrderChangeRecord {
  version: number
  at: string
  actions: unknown[]
  totalBefore: number
  totalAfter: number
  by?: string
  reason?: string
}

/** What every stored change also writes, in the same atomic step. */
export type OrderEvent = OrderCreatedEvent | OrderStatusChangedEvent | OrderChangedEvent

/** The event of a change to a stored order, which `replace` stores: a move or a change after placement. */
export type OrderReplacedEvent = OrderStatusChangedEvent | OrderChangedEvent

export interface EventPage {
  /** In feed order; empty means nothing readable yet, not the end. */
  items: OrderEvent[]
}

// Event ids are v4 UUIDs as crypto.randomUUID spells them; anything else names no event.
const EVENT_ID = /^[\da-f]{8}-[\da-f]{4}-4[\da-f]{3}-[89ab][\da-f]{3}-[\da-f]{12}$/

/** The `created` event of an order the storage has yet to number: it stores the event with the numbered order. */
export function createdEvent<O extends NewOrder> (order: O): Omit<OrderCreatedEvent, 'order'> & { order: O } {
  return { id: newEventId(), type: 'created', at: order.createdAt, order }
}

export function statusChangedEvent (order: Order, from: OrderStatus): OrderStatusChangedEvent {
  return { id: newEventId(), type: 'statusChanged', at: order.updatedAt, order, from }
}

/** The `changed` event of an applied change: the order after it, and `change`, its entry of `order.changes`. */
export function changedEvent (order: Order, change: OrderChangeRecord): OrderChangedEvent {
  return { id: newEventId(), type: 'changed', at: order.updatedAt, order, change }
}

/**
 * An event as JSON around its order's JSON, which the caller has already (the storage keeps it
 * beside the event): the one spelling of an event, keys in OrderEvent's order, for every storage that
 * keeps events as JSON text.
 */
export function eventJson (event: Pick<OrderEvent, 'id' | 'type' | 'at'> & { from?: string, change?: OrderChangeRecord }, orderJson: string): string {
  const from = event.from === undefined ? '' : `,"from":${JSON.stringify(event.from)}`
  const change = event.change === undefined ? '' : `,"change":${JSON.stringify(event.change)}`
  return `{"id":${JSON.stringify(event.id)},"type":"${event.type}","at":${JSON.stringify(event.at)},"order":${orderJson}${from}${change}}`
}

export function isEventId (id: string): boolean {
  return EVENT_ID.test(id)
}

export { newEventId }
