// The event feed and subscriptions in memory: events in the order they were stored, each committed at once.
import type { OrderEvent } from '../../events.js'
import type { DeliveryOutcomes, FeedCapability, Lease, LeaseRequest, SubscriptionsCapability } from '../order-storage.js'
import { memoryDeadLetters } from './memory-dead-letters.js'

interface StoredSubscription {
  holder: string | null
  /** Date.now() after which the lease has lapsed. */
  expiresAt: number
  /** Date.now() of the last time a holder took or renewed the lease. */
  heldAt: number
  /** Feed position of the last event handled (or of the last event stored before a `now` start). */
  position: number
  lastEventId: string | null
  /** Events after `position` recorded as finished: never read again. */
  finished: Set<string>
}

export interface MemoryFeed extends FeedCapability, SubscriptionsCapability {
  /** Stores a change's event, in the same synchronous step as the change. */
  append: (event: OrderEvent) => void
  /** Throws when an event with this id is stored already, before the change is made. */
  assertNewEvent: (event: OrderEvent) => void
}

export function memoryFeed (): MemoryFeed {
  // The event at feed position p sits at events[p - base]; purging moves `oldest` forward and compacts now and then.
  const events: OrderEvent[] = []
  const positions = new Map<string, number>()
  let base = 0
  let oldest = 0
  const subscriptions = new Map<string, StoredSubscription>()
  const deadLetters = memoryDeadLetters()

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

  const eventAt = (eventId: string) => {
    const position = positions.get(eventId)
    return position === undefined ? undefined : { event: events[position - base]!, position }
  }

  function purgeEvents (before: string, limit: number): number {
    // Live subscriptions (held after `before`) keep every event they have not handled.
    const heldSince = Date.parse(before)
    let keepFrom = Infinity
    for (const subscription of subscriptions.values()) {
      if (subscription.heldAt > heldSince) keepFrom = Math.min(keepFrom, subscription.position + 1)
    }
    let count = 0
    for (; count < limit && oldest < events.length && base + oldest < keepFrom; count++) {
      const event = events[oldest]!
      if (event.at >= before) break
      positions.delete(event.id)
      oldest++
    }
    if (oldest > 1024 && oldest * 2 > events.length) {
      events.splice(0, oldest)
      base += oldest
      oldest = 0
    }
    return count
  }

  function lease ({ name, holder, ttl, from }: LeaseRequest): Lease {
    const now = Date.now()
    let subscription = subscriptions.get(name)
    if (subscription === undefined) {
      const position = from === 'now' ? base + events.length - 1 : -1
      subscription = { holder: null, expiresAt: 0, heldAt: 0, position, lastEventId: null, finished: new Set() }
      subscriptions.set(name, subscription)
    }
    const held = subscription.holder === holder || subscription.holder === null || subscription.expiresAt <= now
    if (held) Object.assign(subscription, { holder, expiresAt: now + ttl, heldAt: now })
    return { held, lastEventId: subscription.lastEventId }
  }

  function checkpoint (name: string, holder: string, lastEventId: string | null, eventId: string): boolean {
    const subscription = subscriptions.get(name)
    const position = positions.get(eventId)
    if (subscription?.holder !== holder || subscription.lastEventId !== lastEventId || position === undefined) return false
    subscription.position = position
    subscription.lastEventId = eventId
    // Passed, or purged (which a position of undefined tells: it is not after the checkpoint).
    for (const id of subscription.finished) {
      if (!(positions.get(id)! > position)) subscription.finished.delete(id)
    }
    return true
  }

  function recordOutcomes (name: string, holder: string, outcomes: DeliveryOutcomes): boolean {
    const subscription = subscriptions.get(name)
    if (subscription?.holder !== holder) return false
    // Only events after the checkpoint: not one it passed, nor one the feed does not hold.
    for (const id of outcomes.finished) {
      if (positions.get(id)! > subscription.position) subscription.finished.add(id)
    }
    deadLetters.record(name, outcomes, eventAt)
    return true
  }

  /** Events after the checkpoint, not finished, up to `limit`: how many, and the first one's `at`. */
  function lagOf (subscription: StoredSubscription, limit: number): { lagEvents: number, oldestAt: string | null } {
    const waiting = eventsFrom(subscription.position + 1, limit, subscription.finished)
    return { lagEvents: waiting.length, oldestAt: waiting[0]?.at ?? null }
  }

  return {
    append (event) {
      positions.set(event.id, base + events.length)
      events.push(event)
    },
    assertNewEvent (event) {
      if (positions.has(event.id)) throw new Error(`event id ${event.id} is already stored`)
    },
    async listEvents ({ after, limit }) {
      if (after === undefined) return eventsFrom(0, limit)
      const position = positions.get(after)
      return position === undefined ? undefined : eventsFrom(position + 1, limit)
    },
    purgeEvents: async (before, limit) => purgeEvents(before, limit),
    lease: async (request) => lease(request),
    async readSubscription (name, limit, after) {
      const subscription = subscriptions.get(name)
      if (subscription === undefined) return []
      // Purging keeps what a live subscription has not handled; one that lapsed resumes at the oldest kept.
      const from = (after === undefined ? undefined : positions.get(after)) ?? subscription.position
      return eventsFrom(from + 1, limit, subscription.finished)
    },
    checkpoint: async (name, holder, lastEventId, eventId) => checkpoint(name, holder, lastEventId, eventId),
    async release (name, holder) {
      const subscription = subscriptions.get(name)
      if (subscription?.holder === holder) Object.assign(subscription, { holder: null, expiresAt: 0 })
    },
    recordOutcomes: async (name, holder, outcomes) => recordOutcomes(name, holder, outcomes),
    readRedeliveries: async (name, limit) => deadLetters.list(name, -Infinity, limit, true).map(letter => letter.event),
    async listDeadLetters (name, { after, limit }) {
      const from = after === undefined ? -Infinity : deadLetters.positionOf(name, after) ?? positions.get(after)
      return from === undefined ? undefined : deadLetters.list(name, from, limit)
    },
    redeliver: async (name, eventIds) => deadLetters.redeliver(name, eventIds),
    async inspectSubscription (name, lagLimit) {
      // Dead letters are stored by a lease holder, so a subscription without a checkpoint has none.
      const subscription = subscriptions.get(name)
      return subscription === undefined ? undefined : { ...lagOf(subscription, lagLimit), deadLetters: deadLetters.count(name) }
    }
  }
}
