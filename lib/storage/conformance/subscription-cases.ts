// Conformance of SubscriptionStore: where a subscription starts, leases, checkpoint compare-and-set.
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createdEvent, type OrderEvent } from '../../feed/events.js'
import type { ConformanceCase } from './case.js'
import { FAR_FUTURE, ids, orderOf, readAll, readFeed, readSubscriptionUntil, storeEvent } from './fixtures.js'

export const subscriptionCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'subscriptions',
    name: 'purgeEvents keeps what a live subscription has not handled',
    async run (storage) {
      const events = Array.from({ length: 4 }, () => createdEvent(orderOf()))
      for (const event of events) await storeEvent(storage, event)
      await readFeed(storage, 4)
      assert.equal((await storage.lease({ name: 'keeper', holder: 'h1', ttl: 60_000, from: 'start' })).held, true)
      assert.equal(await storage.checkpoint('keeper', 'h1', null, events[0]!.id), true)
      // Events are from 2026-01-01; the lease was held after this cutoff, so the subscription is live.
      const cutoff = new Date(Date.now() - 60_000).toISOString()
      assert.equal(await storage.purgeEvents(cutoff, 10), 1, 'only the event the subscription handled')
      assert.deepEqual(ids(await readAll(storage)), ids(events.slice(1)))
      await storage.release('keeper', 'h1')
      assert.equal(await storage.purgeEvents(cutoff, 10), 0, 'a released subscription is live until retention passes')
      assert.equal(await storage.purgeEvents(FAR_FUTURE, 10), 3, 'one not held since the cutoff holds nothing back')
    }
  },
  {
    capability: 'subscriptions',
    name: 'a subscription from start reads from the oldest event, one from now only what comes later',
    async run (storage) {
      const before = createdEvent(orderOf())
      await storeEvent(storage, before)
      await readFeed(storage, 1)
      assert.deepEqual(await storage.lease({ name: 'from-start', holder: 'h', ttl: 60_000, from: 'start' }), { held: true, lastEventId: null })
      assert.deepEqual(await storage.lease({ name: 'from-now', holder: 'h', ttl: 60_000, from: 'now' }), { held: true, lastEventId: null })
      assert.deepEqual(await storage.readSubscription('from-now', 10), [], 'nothing stored before a now subscription starts')
      const after = createdEvent(orderOf())
      await storeEvent(storage, after)
      assert.deepEqual(await readSubscriptionUntil(storage, 'from-now', 1), [after])
      assert.deepEqual(await readSubscriptionUntil(storage, 'from-start', 2), [before, after])
      assert.deepEqual(await storage.lease({ name: 'from-now', holder: 'h', ttl: 60_000, from: 'start' }), { held: true, lastEventId: null },
        'from applies only when the subscription is created')
      assert.deepEqual(await storage.readSubscription('from-now', 10), [after])
      assert.deepEqual(await storage.readSubscription('unknown', 10), [], 'a subscription never leased reads nothing')
    }
  },
  {
    capability: 'subscriptions',
    name: 'checkpoint is a compare-and-set on the holder and the last event',
    async run (storage) {
      const events = [createdEvent(orderOf()), createdEvent(orderOf())]
      for (const event of events) await storeEvent(storage, event)
      await readFeed(storage, 2)
      const [first, second] = events as [OrderEvent, OrderEvent]
      await storage.lease({ name: 'cas', holder: 'h1', ttl: 60_000, from: 'start' })
      assert.equal(await storage.checkpoint('cas', 'h2', null, first.id), false, 'another holder cannot move it')
      assert.equal(await storage.checkpoint('cas', 'h1', second.id, first.id), false, 'a stale last event cannot move it')
      assert.equal(await storage.checkpoint('other', 'h1', null, first.id), false, 'an unknown subscription')
      assert.equal(await storage.checkpoint('cas', 'h1', null, first.id), true)
      assert.deepEqual(await storage.readSubscription('cas', 10), [second], 'reading resumes after the checkpoint')
      assert.equal(await storage.checkpoint('cas', 'h1', null, second.id), false, 'the checkpoint moved on')
      assert.deepEqual(await storage.lease({ name: 'cas', holder: 'h1', ttl: 60_000, from: 'start' }), { held: true, lastEventId: first.id })
      assert.equal(await storage.checkpoint('cas', 'h1', first.id, second.id), true)
      assert.deepEqual(await storage.readSubscription('cas', 10), [])
    }
  },
  {
    capability: 'subscriptions',
    name: 'a lease is held by one holder until it lapses or is released',
    async run (storage) {
      const event = createdEvent(orderOf())
      await storeEvent(storage, event)
      await readFeed(storage, 1)
      assert.deepEqual(await storage.lease({ name: 'lease', holder: 'h1', ttl: 60_000, from: 'start' }), { held: true, lastEventId: null })
      await storage.checkpoint('lease', 'h1', null, event.id)
      assert.deepEqual(await storage.lease({ name: 'lease', holder: 'h2', ttl: 60_000, from: 'start' }), { held: false, lastEventId: event.id },
        'another holder is refused, and told the checkpoint')
      await storage.release('lease', 'h2')
      assert.equal((await storage.lease({ name: 'lease', holder: 'h2', ttl: 60_000, from: 'start' })).held, false, 'only the holder releases')
      await storage.release('lease', 'h1')
      assert.equal((await storage.lease({ name: 'lease', holder: 'h2', ttl: 200, from: 'start' })).held, true, 'a released lease is taken at once')
      assert.equal((await storage.lease({ name: 'lease', holder: 'h1', ttl: 200, from: 'start' })).held, false)
      await sleep(400)
      assert.equal((await storage.lease({ name: 'lease', holder: 'h1', ttl: 60_000, from: 'start' })).held, true, 'a lapsed lease is taken over')
      const next = createdEvent(orderOf())
      await storeEvent(storage, next)
      await readFeed(storage, 1, event.id)
      assert.equal(await storage.checkpoint('lease', 'h2', event.id, next.id), false, 'the holder that lost the lease cannot checkpoint')
      assert.equal(await storage.checkpoint('lease', 'h1', event.id, next.id), true)
    }
  }
])
