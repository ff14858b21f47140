// In-process listeners of app.orders: run after a change is stored, best-effort, never failing the request.
import type { FastifyBaseLogger } from 'fastify'
import { codes } from '../errors.js'
import { loggableFailure } from './describe-failure.js'
import type { Order } from '../http/schemas.js'
import type { OrderChangedEvent } from './events.js'
import type { OrderStatus } from '../orders/statuses.js'

/** What a `statusChanged` listener gets: the order after the move, and the statuses it moved between. */
export interface OrderMove {
  order: Order
  from: OrderStatus
  to: OrderStatus
}

/**
 * Listeners run in this process after the change is stored; one that throws or rejects is logged and
 * ignored. Best-effort: a crash after the commit loses them. For durable delivery use the event feed
 * (`listEvents`) and `subscribe`.
 */
export interface OrderListeners {
  created: (order: Order) => unknown
  statusChanged: (move: OrderMove) => unknown
  /** With the `changes` option on: an applied change, as the feed's event (the order after it and `change`). */
  changed: (event: OrderChangedEvent) => unknown
}

export interface Listeners {
  /** Adds a listener; ORDER_INVALID_LISTENER for an unknown event or a listener that is not a function. */
  on: <E extends keyof OrderListeners>(event: E, listener: OrderListeners[E]) => void
  /** Whether `event` has a listener, so a change without any skips making its payload. */
  has: (event: keyof OrderListeners) => boolean
  /** Runs the listeners of `event` in turn, logging each failure. */
  emit: <E extends keyof OrderListeners>(event: E, payload: Parameters<OrderListeners[E]>[0]) => Promise<void>
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function'
}

export function createListeners (log: FastifyBaseLogger): Listeners {
  const listeners: { [E in keyof OrderListeners]: Array<OrderListeners[E]> } = { created: [], statusChanged: [], changed: [] }
  return {
    on (event, listener) {
      if (!Object.hasOwn(listeners, event)) {
        throw new codes.ORDER_INVALID_LISTENER(`unknown event ${JSON.stringify(event)}; use "created", "statusChanged" or "changed"`)
      }
      if (typeof listener !== 'function') {
        throw new codes.ORDER_INVALID_LISTENER(`the "${event}" listener must be a function`)
      }
      listeners[event].push(listener as never)
    },
    has: event => listeners[event].length > 0,
    async emit (event, payload) {
      for (const listener of listeners[event]) {
        try {
          const result = (listener as (payload: unknown) => unknown)(payload)
          if (isThenable(result)) await result
        } catch (err) {
          log.error({ err: loggableFailure(err), event }, `fastify-order: a "${event}" listener failed; the change is stored`)
        }
      }
    }
  }
}
