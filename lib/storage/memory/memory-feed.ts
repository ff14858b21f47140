// The event feed in memory: events in the order they were stored, each committed at once; subscriptions read it.
import type { OrderEvent } from '../../feed/events.js'
import type { Order } from '../../http/schemas.js'
import type { FeedCapability, SubscriptionsCapability } from '../order-storage.js'
import { memorySubscriptions } from './memory-subscriptions.js'
import { idPositions } from './id-positions.js'
import { handed, handedEvent } from './kept.js'

export interface MemoryFeed extends FeedCapability, SubscriptionsCapability {
  /**
   * Stores a change's event, in the same synchronous step as the change and before any of it: throws,
   * storing nothing, when an event with this id is stored already.
   */
  append: (event: OrderEvent) => void
}

/**
 * What the feed keeps of an event: a `created` event whose time is its order's creation is kept as the
 * order alone (its id beside it), one object fewer for every create; any other event as it is.
 */
type Kept = Order | OrderEvent

const isEvent = (kept: Kept): kept is OrderEvent => 'type' in kept

export function memoryFeed (): MemoryFeed {
  // The event at feed position p is at p - base in `ids` and `kept`; purging moves `oldest` forward and compacts now and then.
  const ids: string[] = []
  const kept: Kept[] = []
  let base = 0
  let oldest = 0
  // Each held event's index in `ids`: its feed position less `base`.
  const indexes = idPositions(index => index >= oldest && index < ids.length ? ids[index] : undefined, () => ({ first: oldest, end: ids.length }))
  const positionOf = (id: string) => {
    const index = indexes.get(id)
    return index === undefined ? undefined : base + index
  }

  /** The event at index `i`, handed out: a copy of the one kept. */
  function eventAt (i: number): OrderEvent {
    const event = kept[i]!
    return isEvent(event) ? handedEvent(event) : { id: ids[i]!, type: 'created', at: event.createdAt, order: handed(event) }
  }

  /** Up to `limit` events from feed position `from` on, without those `skip` names. */
  function eventsFrom (from: number, limit: number, skip?: ReadonlySet<string>): OrderEvent[] {
    const found: OrderEvent[] = []
    for (let i = Math.max(from - base, oldest); i < ids.length && found.length < limit; i++) {
      if (skip === undefined || !skip.has(ids[i]!)) found.push(eventAt(i))
    }
    return found
  }

  const { keepFrom, ...subscriptions } = memorySubscriptions({
    eventsFrom,
    positionOf,
    last: () => base + ids.length - 1
  })

  function purgeEvents (before: string, limit: number): number {
    // Live subscriptions (held after `before`) keep every event they have not handled.
    const keep = keepFrom(Date.parse(before))
    let count = 0
    for (; count < limit && oldest < ids.length && base + oldest < keep; count++) {
      const event = kept[oldest]!
      if ((isEvent(event) ? event.at : event.createdAt) >= before) break
      oldest++
    }
    if (oldest > 1024 && oldest * 2 > ids.length) {
      const cut = oldest
      ids.splice(0, cut)
      kept.splice(0, cut)
      base += cut
      oldest = 0
      indexes.rebuild(cut)
    }
    return count
  }

  return {
    append (event) {
      if (!indexes.add(event.id, ids.length)) throw new Error(`event id ${event.id} is already stored`)
      ids.push(event.id)
      kept.push(event.type === 'created' && event.at === event.order.createdAt ? event.order : event)
    },
    async listEvents ({ after, limit }) {
      if (after === undefined) return eventsFrom(0, limit)
      const position = positionOf(after)
      return position === undefined ? undefined : eventsFrom(position + 1, limit)
    },
    purgeEvents: async (before, limit) => purgeEvents(before, limit),
    ...subscriptions
  }
}
