// Orders and events handed to host code are frozen: a storage such as memoryStorage may hold the same objects.
import type { CustomFieldRules } from '../custom-fields/values.js'
import type { OrderEvent } from '../feed/events.js'
import type { Order, OrderWithChanges } from '../http/schemas.js'

export interface Freezer {
  order: (order: Order) => Order
  event: (event: OrderEvent) => OrderEvent
}

/**
 * Freezes what host code gets (`app.orders`, listeners, the feed, subscriptions): a change made by the
 * host would otherwise corrupt a storage that keeps the same objects. Responses skip this: the
 * serializer is the only reader there.
 */
export function freezer (fields: CustomFieldRules): Freezer {
  function order (value: Order): Order {
    if (Object.isFrozen(value)) return value
    for (const item of value.items) Object.freeze(item)
    for (const change of value.statusHistory) Object.freeze(change)
    Object.freeze(value.items)
    Object.freeze(value.statusHistory)
    Object.freeze(value.metadata)
    const { payments, changes } = value as Partial<OrderWithChanges>
    if (payments !== undefined) {
      for (const payment of payments) Object.freeze(payment)
      Object.freeze(payments)
    }
    if (changes !== undefined) {
      for (const change of changes) {
        for (const action of change.actions) {
          if ('item' in action) Object.freeze(action.item)
          Object.freeze(action)
        }
        Object.freeze(change.actions)
        Object.freeze(change)
      }
      Object.freeze(changes)
    }
    fields.freeze(value)
    return Object.freeze(value)
  }
  return {
    order,
    event (value) {
      order(value.order)
      return Object.freeze(value)
    }
  }
}
