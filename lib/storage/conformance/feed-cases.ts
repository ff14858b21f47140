// Conformance of EventFeedStore: every change with its event, feed order with no skip, bounded purges.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createdEvent, statusChangedEvent, type OrderEvent } from '../../feed/events.js'
import type { ConformanceCase } from './case.js'
import { FAR_FUTURE, INSTANTS, LATER, PARALLEL, assertCreated, claimOf, feedBeforeSentinel, ids, moved, orderOf, readAll, readFeed, storeEvent, storeOrder } from './fixtures.js'

export const feedCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'feed',
    name: 'every stored change is listed with its event, in feed order',
    async run (storage) {
      const first = createdEvent(orderOf())
      const second = createdEvent(orderOf({ createdAt: LATER }))
      assertCreated(await storeEvent(storage, first), first.order, 'create')
      assertCreated(await storeEvent(storage, second), second.order, 'create')
      const paid = statusChangedEvent(moved(first.order, 'paid'), 'pending')
      assert.equal(await storage.replace(structuredClone(paid.order), 1, structuredClone(paid)), true)
      const feed = await readFeed(storage, 3)
      assert.deepEqual(feed, [first, second, paid], 'listEvents returns the events as given, in the order they were stored')
      assert.deepEqual(await readFeed(storage, 2, first.id), [second, paid], 'after an id, the page starts with the next event')
      assert.deepEqual(await storage.listEvents({ after: first.id, limit: 1 }), [second], 'at most limit events')
      assert.deepEqual(await storage.listEvents({ after: paid.id, limit: 10 }), [], 'after the newest event, an empty page')
    }
  },
  {
    capability: 'feed',
    name: 'a change that stores nothing stores no event',
    async run (storage) {
      const order = orderOf()
      const created = createdEvent(order)
      await storeEvent(storage, created, claimOf('key-events'))
      const replay = await storeOrder(storage, orderOf(), claimOf('key-events'))
      assert.equal(replay.created, false, 'a create with a claimed key stores nothing')
      const stale = statusChangedEvent(moved(order, 'paid'), 'pending')
      assert.equal(await storage.replace(stale.order, 2, stale), false, 'a replace with a stale version stores nothing')
      const unknown = statusChangedEvent(orderOf({ id: 'ord_unknown', version: 2 }), 'pending')
      assert.equal(await storage.replace(unknown.order, 1, unknown), false, 'a replace of an unknown order stores nothing')
      assert.deepEqual(ids(await feedBeforeSentinel(storage)), [created.id], 'only the change that was stored has an event')
    }
  },
  {
    capability: 'feed',
    name: 'a change whose event cannot be stored is not stored either',
    async run (storage) {
      const first = createdEvent(orderOf())
      await storeEvent(storage, first)
      // An event id already in the feed: the event insert fails, and the change with it.
      const order = orderOf()
      await assert.rejects(storeEvent(storage, { ...createdEvent(order), id: first.id }), 'a create whose event id is taken rejects')
      assert.equal(await storage.get(order.id), undefined, 'and stores no order')
      const keyed = orderOf()
      await assert.rejects(storeEvent(storage, { ...createdEvent(keyed), id: first.id }, claimOf('key-atomic')),
        'a claimed create whose event id is taken rejects')
      assert.equal(await storage.get(keyed.id), undefined, 'and stores no order')
      const retried = orderOf()
      assertCreated(await storeOrder(storage, retried, claimOf('key-atomic')), retried, 'and claims no key')
      const paid = moved(first.order, 'paid')
      await assert.rejects(storage.replace(paid, 1, { ...statusChangedEvent(paid, 'pending'), id: first.id }),
        'a replace whose event id is taken rejects')
      assert.deepEqual(await storage.get(first.order.id), first.order, 'and leaves the order as it was')
      assert.equal((await feedBeforeSentinel(storage)).length, 2, 'the feed holds the events of the two stored changes only')
    }
  },
  {
    capability: 'feed',
    name: 'listEvents after an id that is not in the feed lists undefined',
    async run (storage) {
      const event = createdEvent(orderOf())
      await storeEvent(storage, event)
      await readFeed(storage, 1)
      assert.equal(await storage.listEvents({ after: randomUUID(), limit: 10 }), undefined)
    }
  },
  {
    capability: 'feed',
    name: 'a reader passing the last id sees every event once while parallel writers store',
    async run (storage) {
      const written: OrderEvent[] = []
      const writer = async (index: number) => {
        for (let round = 0; round < 6; round++) {
          const created = createdEvent(orderOf({ customerId: `cus_writer_${index}` }))
          await storeEvent(storage, created)
          const paid = statusChangedEvent(moved(created.order, 'paid'), 'pending')
          await storage.replace(paid.order, 1, paid)
          written.push(created, paid)
        }
      }
      const total = PARALLEL * 6 * 2
      const [seen] = await Promise.all([
        readFeed(storage, total, undefined, 7),
        Promise.all(Array.from({ length: PARALLEL }, (_, index) => writer(index)))
      ])
      assert.equal(seen.length, total, 'exactly one event per stored change')
      assert.equal(new Set(ids(seen)).size, total, 'no event is listed twice')
      assert.deepEqual(new Set(ids(seen)), new Set(ids(written)), 'every stored change is listed')
      const versions = new Map<string, number>()
      for (const event of seen) {
        assert.equal(event.order.version, (versions.get(event.order.id) ?? 0) + 1, 'events of one order are listed in version order')
        versions.set(event.order.id, event.order.version)
      }
    }
  },
  {
    capability: 'feed',
    name: 'events keep every string the order holds',
    async run (storage) {
      // PostgreSQL's jsonb would refuse these; the order document keeps them, so the event must too.
      const order = orderOf({ customerId: 'cus \u0000 \ud800 "quoted" é 🛒', metadata: { note: 'nul \u0000 lone \udfff' } })
      const event = createdEvent(order)
      await storeEvent(storage, event)
      assert.deepEqual(await readFeed(storage, 1), [event])
    }
  },
  {
    capability: 'feed',
    name: 'purgeEvents deletes the oldest expired events a bounded batch at a time',
    async run (storage) {
      const events = Array.from({ length: 5 }, (_, i) => createdEvent(orderOf({ createdAt: INSTANTS[i] })))
      for (const event of events) await storeEvent(storage, event)
      await readFeed(storage, 5)
      assert.equal(await storage.purgeEvents(INSTANTS[0]!, 10), 0, 'no event is older than the cutoff')
      assert.equal(await storage.purgeEvents(FAR_FUTURE, 2), 2, 'at most limit events')
      assert.equal(await storage.listEvents({ after: events[1]!.id, limit: 10 }), undefined, 'a purged id names no event')
      assert.deepEqual(ids(await readAll(storage)), ids(events.slice(2)), 'the oldest went first')
      assert.equal(await storage.purgeEvents(INSTANTS[3]!, 10), 1, 'only events stored before the cutoff')
      assert.deepEqual(ids(await readAll(storage)), ids(events.slice(3)))
    }
  },
  {
    capability: 'feed',
    name: 'purgeEvents stops at the first event it keeps, whatever the at of later events',
    async run (storage) {
      // Writers take `at` before they insert, so feed order and `at` order disagree near the edge:
      // here the second event is newer than the cutoff, the third older.
      const ats = [INSTANTS[0]!, INSTANTS[4]!, INSTANTS[1]!, INSTANTS[0]!]
      const events = ats.map(at => createdEvent(orderOf({ createdAt: at })))
      for (const event of events) await storeEvent(storage, event)
      await readFeed(storage, events.length)
      assert.equal(await storage.purgeEvents(INSTANTS[3]!, 10), 1, 'only the run before the first kept event')
      assert.deepEqual(ids(await readAll(storage)), ids(events.slice(1)), 'no gap a reader could skip silently')
      assert.deepEqual(ids((await storage.listEvents({ after: events[1]!.id, limit: 10 }))!), ids(events.slice(2)),
        'a reader after the kept event still gets the older ones behind it')
    }
  }
])
