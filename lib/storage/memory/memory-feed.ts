// The event feed in memory: events in the order they were stored, each committed at once; subscriptions read it.
import type { OrderEvent } from '../../feed/events.js'
import type { FeedCapability, SubscriptionsCapability } from '../order-storage.js'
import { memorySubscriptions } from './memory-subscriptions.js'
import { eventPositions } from './event-positions.js'

export interface MemoryFeed extends FeedCapability, SubscriptionsCapability {
  /**
   * Stores a change's event, in the same synchronous step as the change and before any of it: throws,
   * storing nothing, when an event with this id is stored already.
   */
  append: (event: OrderEvent) => void
}

export function memoryFeed (): MemoryFeed {
  // The event at feed position p sits at events[p - base]; purging moves `oldest` forward and compacts now and then.
  const events: OrderEvent[] = []
  let base = 0
  let oldest = 0
  const positions = eventPositions(
    position => position - base >= oldest && position - base < events.length ? events[position - base]!.id : undefined,
    () => ({ first: base + oldest, end: base + events.length })
  )

  /** Up to `limit` events from feed position `from` on, without those `skip` names. */
  function eventsFrom (from: number, limit: number, skip?: ReadonlySet<string>): OrderEvent[] {
    const start = Math.max(from - base, oldest)
    if (skip === undefined || skip.size === 0) return events.slice(start, start + limit)
    const found: OrderEvent[] = []
    for (let i = start; i < events.length && found.length < limit; i++) {
      if (!skip.has(events[i]!.id)) found.push(events[i]!)
    }
    return found
  }

  const { keepFrom, ...subscriptions } = memorySubscriptions({
    eventsFrom,
    positionOf: positions.get,
    last: () => base + events.length - 1
  })

  function purgeEvents (before: string, limit: number): number {
    // Live subscriptions (held after `before`) keep every event they have not handled.
    const keep = keepFrom(Date.parse(before))
    let count = 0
    for (; count < limit && oldest < events.length && base + oldest < keep; count++) {
      if (events[oldest]!.at >= before) break
      oldest++
    }
    if (oldest > 1024 && oldest * 2 > events.length) {
      events.splice(0, oldest)
      base += oldest
      oldest = 0
      positions.rebuild()
    }
    return count
  }

  return {
    append (event) {
      if (!positions.add(event.id, base + events.length)) throw new Error(`event id ${event.id} is already stored`)
      events.push(event)
    },
    async listEvents ({ after, limit }) {
      if (after === undefined) return eventsFrom(0, limit)
      const position = positions.get(after)
      return position === undefined ? undefined : eventsFrom(position + 1, limit)
    },
    purgeEvents: async (before, limit) => purgeEvents(before, limit),
    ...subscriptions
  }
}
