// Subscriptions in memory: a lease and a checkpoint per name, the events finished above it, and dead letters.
import type { OrderEvent } from '../../feed/events.js'
import type { DeliveryOutcomes, Lease, LeaseRequest, SubscriptionsCapability } from '../order-storage.js'
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

/** What subscriptions read of the feed. */
export interface FeedLog {
  /** Up to `limit` events from feed position `from` on (the oldest kept, when purged), without those `skip` names. */
  eventsFrom: (from: number, limit: number, skip?: ReadonlySet<string>) => OrderEvent[]
  /** The feed position of an event the feed holds. */
  positionOf: (eventId: string) => number | undefined
  /** The position of the last event stored, or -1. */
  last: () => number
}

export interface MemorySubscriptions extends SubscriptionsCapability {
  /** The first feed position a subscription held after `heldSince` (Date.now() time) has not handled; Infinity if none. */
  keepFrom: (heldSince: number) => number
}

export function memorySubscriptions (feed: FeedLog): MemorySubscriptions {
  const subscriptions = new Map<string, StoredSubscription>()
  const deadLetters = memoryDeadLetters()

  const eventAt = (eventId: string) => {
    const position = feed.positionOf(eventId)
    return position === undefined ? undefined : { event: feed.eventsFrom(position, 1)[0]!, position }
  }

  function lease ({ name, holder, ttl, from }: LeaseRequest): Lease {
    const now = Date.now()
    let subscription = subscriptions.get(name)
    if (subscription === undefined) {
      subscription = { holder: null, expiresAt: 0, heldAt: 0, position: from === 'now' ? feed.last() : -1, lastEventId: null, finished: new Set() }
      subscriptions.set(name, subscription)
    }
    const held = subscription.holder === holder || subscription.holder === null || subscription.expiresAt <= now
    if (held) Object.assign(subscription, { holder, expiresAt: now + ttl, heldAt: now })
    return { held, lastEventId: subscription.lastEventId }
  }

  function checkpoint (name: string, holder: string, lastEventId: string | null, eventId: string): boolean {
    const subscription = subscriptions.get(name)
    const position = feed.positionOf(eventId)
    if (subscription?.holder !== holder || subscription.lastEventId !== lastEventId || position === undefined) return false
    subscription.position = position
    subscription.lastEventId = eventId
    // Passed, or purged (which a position of undefined tells: it is not after the checkpoint).
    for (const id of subscription.finished) {
      if (!(feed.positionOf(id)! > position)) subscription.finished.delete(id)
    }
    return true
  }

  function recordOutcomes (name: string, holder: string, outcomes: DeliveryOutcomes): boolean {
    const subscription = subscriptions.get(name)
    if (subscription?.holder !== holder) return false
    // Only events after the checkpoint: not one it passed, nor one the feed does not hold.
    for (const id of outcomes.finished) {
      if (feed.positionOf(id)! > subscription.position) subscription.finished.add(id)
    }
    deadLetters.record(name, outcomes, eventAt)
    return true
  }

  /** Events after the checkpoint, not finished, up to `limit`: how many, and the first one's `at`. */
  function lagOf (subscription: StoredSubscription, limit: number): { lagEvents: number, oldestAt: string | null } {
    const waiting = feed.eventsFrom(subscription.position + 1, limit, subscription.finished)
    return { lagEvents: waiting.length, oldestAt: waiting[0]?.at ?? null }
  }

  return {
    keepFrom (heldSince) {
      let keepFrom = Infinity
      for (const subscription of subscriptions.values()) {
        if (subscription.heldAt > heldSince) keepFrom = Math.min(keepFrom, subscription.position + 1)
      }
      return keepFrom
    },
    lease: async (request) => lease(request),
    async readSubscription (name, limit, after) {
      const subscription = subscriptions.get(name)
      if (subscription === undefined) return []
      // Purging keeps what a live subscription has not handled; one that lapsed resumes at the oldest kept.
      const from = (after === undefined ? undefined : feed.positionOf(after)) ?? subscription.position
      return feed.eventsFrom(from + 1, limit, subscription.finished)
    },
    checkpoint: async (name, holder, lastEventId, eventId) => checkpoint(name, holder, lastEventId, eventId),
    async release (name, holder) {
      const subscription = subscriptions.get(name)
      if (subscription?.holder === holder) Object.assign(subscription, { holder: null, expiresAt: 0 })
    },
    recordOutcomes: async (name, holder, outcomes) => recordOutcomes(name, holder, outcomes),
    readRedeliveries: async (name, limit) => deadLetters.list(name, -Infinity, limit, true).map(letter => letter.event),
    async listDeadLetters (name, { after, limit }) {
      const from = after === undefined ? -Infinity : deadLetters.positionOf(name, after) ?? feed.positionOf(after)
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
