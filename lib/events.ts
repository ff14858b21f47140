// The event shape and the feed: every stored change's event, listEvents, and the purge of expired events.
import { randomFillSync } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { codes } from './errors.js'
import { DEFAULT_EVENT_PAGE, type ListEventsQuery, type Order } from './schemas.js'
import type { OrderStorage } from './storage/types.js'

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
  from: string
}

/** What every stored change also writes, in the same atomic step. */
export type OrderEvent = OrderCreatedEvent | OrderStatusChangedEvent

export interface EventPage {
  /** In feed order; empty means nothing readable yet, not the end. */
  items: OrderEvent[]
}

// Event ids are v4 UUIDs as crypto.randomUUID spells them; anything else names no event.
const EVENT_ID = /^[\da-f]{8}-[\da-f]{4}-4[\da-f]{3}-[89ab][\da-f]{3}-[\da-f]{12}$/
// One purge a hundred writes, of up to twice that: the feed cannot outgrow what retention keeps.
const PURGE_EVERY = 100
const PURGE_BATCH = 200

// Random bytes are drawn in batches, as for order ids; each id is written into one buffer and read out
// as one flat string (crypto.randomUUID's is a tree of joined pieces, several times larger in memory,
// which a stored event keeps for the whole retention).
const entropy = Buffer.alloc(16 * 256)
let used = entropy.length
const spelled = Buffer.alloc(36)
const HEX = Buffer.from('0123456789abcdef')

/** A random (version 4) UUID, as crypto.randomUUID spells it. */
export function newEventId (): string {
  if (used === entropy.length) {
    randomFillSync(entropy)
    used = 0
  }
  entropy[used + 6] = (entropy[used + 6]! & 0x0f) | 0x40
  entropy[used + 8] = (entropy[used + 8]! & 0x3f) | 0x80
  let at = 0
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) spelled[at++] = 0x2d
    const byte = entropy[used + i]!
    spelled[at++] = HEX[byte >> 4]!
    spelled[at++] = HEX[byte & 15]!
  }
  used += 16
  return spelled.toString('latin1')
}

export function createdEvent (order: Order): OrderCreatedEvent {
  return { id: newEventId(), type: 'created', at: order.createdAt, order }
}

export function statusChangedEvent (order: Order, from: string): OrderStatusChangedEvent {
  return { id: newEventId(), type: 'statusChanged', at: order.updatedAt, order, from }
}

export function isEventId (id: string): boolean {
  return EVENT_ID.test(id)
}

export interface EventFeedConfig {
  storage: OrderStorage
  /** How long events are kept at least, in milliseconds. */
  retention: number
  log: FastifyBaseLogger
  /** Freezes an event before host code gets it. */
  readonly: (event: OrderEvent) => OrderEvent
}

export interface EventFeed {
  listEvents: (query: ListEventsQuery) => Promise<EventPage>
  /** Called after each stored change; purges expired events now and then. */
  written: () => void
  /** Waits for a purge under way. */
  close: () => Promise<void>
}

export function createEventFeed ({ storage, retention, log, readonly }: EventFeedConfig): EventFeed {
  let writes = 0
  let purging: Promise<void> | undefined

  async function purge (): Promise<void> {
    try {
      await storage.purgeEvents(new Date(Date.now() - retention).toISOString(), PURGE_BATCH)
    } catch (err) {
      log.warn({ err }, 'fastify-order: purging expired events failed; the next purge retries')
    } finally {
      purging = undefined
    }
  }

  return {
    async listEvents ({ after, limit = DEFAULT_EVENT_PAGE }) {
      if (after !== undefined && !isEventId(after)) throw new codes.ORDER_EVENT_NOT_FOUND(after)
      let items
      try {
        items = await storage.listEvents({ after, limit })
      } catch (err) {
        throw new codes.ORDER_STORAGE_UNAVAILABLE({ cause: err })
      }
      if (items === undefined) throw new codes.ORDER_EVENT_NOT_FOUND(after)
      return { items: items.map(readonly) }
    },
    written () {
      // The first write after start purges too, so a restarted app catches up at once.
      if (writes++ % PURGE_EVERY === 0 && purging === undefined) purging = purge()
    },
    async close () {
      await purging
    }
  }
}
