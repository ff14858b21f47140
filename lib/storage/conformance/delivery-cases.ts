// Conformance of deliveries that keep up: events finished above the checkpoint, dead letters, redelivery, lag.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createdEvent, type OrderEvent } from '../../feed/events.js'
import type { DeliveryOutcomes } from '../order-storage.js'
import type { CaseStorage, ConformanceCase } from './case.js'
import { FAR_FUTURE, INSTANTS, ids, orderOf, readFeed, storeEvent } from './fixtures.js'

const NOTHING: DeliveryOutcomes = { finished: [], deadLetters: [], delivered: [] }
const SET_ASIDE = '2026-01-02T00:00:00.000Z'

/** `count` events, an instant apart, stored and listed, and the subscription `name` leased by `holder` from the start. */
async function leasedFeed (storage: CaseStorage, name: string, count: number, holder = 'h1'): Promise<OrderEvent[]> {
  const events = Array.from({ length: count }, (_, i) => createdEvent(orderOf({ createdAt: INSTANTS[i % INSTANTS.length] })))
  for (const event of events) await storeEvent(storage, event)
  await readFeed(storage, count)
  assert.equal((await storage.lease({ name, holder, ttl: 60_000, from: 'start' })).held, true)
  return events
}

const letter = (event: OrderEvent, attempts = 3, error = 'the receiver answered HTTP 400') => ({ eventId: event.id, attempts, error, at: SET_ASIDE })

export const deliveryCases: readonly ConformanceCase[] = Object.freeze([
  {
    capability: 'subscriptions',
    name: 'readSubscription continues after an event it read, and never lists one recorded as finished',
    async run (storage) {
      const [e1, e2, e3, e4] = await leasedFeed(storage, 'ahead', 4) as [OrderEvent, OrderEvent, OrderEvent, OrderEvent]
      assert.deepEqual(ids(await storage.readSubscription('ahead', 2)), ids([e1, e2]))
      assert.deepEqual(ids(await storage.readSubscription('ahead', 10, e2.id)), ids([e3, e4]), 'after an event read earlier')
      assert.equal(await storage.recordOutcomes('ahead', 'h2', { ...NOTHING, finished: [e2.id] }), false, 'only the holder records')
      assert.equal(await storage.recordOutcomes('ahead', 'h1', { ...NOTHING, finished: [e2.id, e4.id] }), true)
      assert.deepEqual(ids(await storage.readSubscription('ahead', 10)), ids([e1, e3]), 'finished events are left out')
      assert.deepEqual(ids(await storage.readSubscription('ahead', 1, e1.id)), ids([e3]))
      await storage.release('ahead', 'h1')
      assert.deepEqual(await storage.lease({ name: 'ahead', holder: 'h2', ttl: 60_000, from: 'start' }), { held: true, lastEventId: null })
      assert.deepEqual(ids(await storage.readSubscription('ahead', 10)), ids([e1, e3]), 'the next holder resumes from the stored progress')
      assert.equal(await storage.checkpoint('ahead', 'h2', null, e3.id), true)
      assert.deepEqual(await storage.readSubscription('ahead', 10), [], 'the event finished above the checkpoint stays finished')
      const e5 = createdEvent(orderOf())
      await storeEvent(storage, e5)
      await readFeed(storage, 1, e4.id)
      assert.deepEqual(ids(await storage.readSubscription('ahead', 10)), ids([e5]))
      assert.equal(await storage.checkpoint('ahead', 'h2', e3.id, e5.id), true, 'a checkpoint passes finished events')
      assert.equal(await storage.recordOutcomes('ahead', 'h2', { ...NOTHING, finished: [e1.id, randomUUID()] }), true,
        'one at or below the checkpoint is no news, nor one the feed does not hold')
      assert.deepEqual(await storage.readSubscription('ahead', 10), [])
    }
  },
  {
    capability: 'subscriptions',
    name: 'dead letters keep a copy of their event, list in feed order and outlive retention',
    async run (storage) {
      const [e1, e2, e3] = await leasedFeed(storage, 'erp', 3) as [OrderEvent, OrderEvent, OrderEvent]
      assert.equal(await storage.recordOutcomes('erp', 'h1', { ...NOTHING, finished: [e3.id], deadLetters: [letter(e3)] }), true)
      const unknown = { ...letter(e2), eventId: randomUUID() }
      assert.equal(await storage.recordOutcomes('erp', 'h1', { ...NOTHING, deadLetters: [letter(e1, 1, 'refused'), unknown] }), true)
      assert.equal(await storage.checkpoint('erp', 'h1', null, e2.id), true)
      const expected = [{ event: e1, attempts: 1, error: 'refused', at: SET_ASIDE }, { event: e3, attempts: 3, error: 'the receiver answered HTTP 400', at: SET_ASIDE }]
      assert.deepEqual(await storage.listDeadLetters('erp', { limit: 10 }), expected, 'in feed order, whatever order they came in; none of an event the feed does not hold')
      assert.deepEqual(await storage.listDeadLetters('erp', { limit: 1 }), expected.slice(0, 1))
      assert.deepEqual(await storage.listDeadLetters('erp', { after: e1.id, limit: 10 }), expected.slice(1), 'after a dead letter')
      assert.deepEqual(await storage.listDeadLetters('erp', { after: e2.id, limit: 10 }), expected.slice(1), 'after an event of the feed')
      assert.equal(await storage.listDeadLetters('erp', { after: randomUUID(), limit: 10 }), undefined, 'after an unknown event')
      assert.deepEqual(await storage.listDeadLetters('crm', { limit: 10 }), [], 'another subscription has none')
      assert.deepEqual(await storage.readSubscription('erp', 10), [], 'a dead letter is finished')
      await storage.checkpoint('erp', 'h1', e2.id, e3.id)
      await storage.release('erp', 'h1')
      assert.equal(await storage.purgeEvents(FAR_FUTURE, 10), 3)
      assert.deepEqual(await storage.listDeadLetters('erp', { limit: 10 }), expected, 'retention purges the feed, not dead letters')
      assert.deepEqual(await storage.listDeadLetters('erp', { after: e1.id, limit: 10 }), expected.slice(1), 'in their feed positions still')
    }
  },
  {
    capability: 'subscriptions',
    name: 'redeliver puts dead letters back until they are delivered; one that fails again is updated',
    async run (storage) {
      const [e1, e2, e3] = await leasedFeed(storage, 'erp', 3) as [OrderEvent, OrderEvent, OrderEvent]
      await storage.recordOutcomes('erp', 'h1', { ...NOTHING, deadLetters: [letter(e1), letter(e3)] })
      await storage.checkpoint('erp', 'h1', null, e3.id)
      assert.deepEqual(await storage.readRedeliveries('erp', 10), [], 'nothing is put back by itself')
      assert.equal(await storage.redeliver('erp', [e3.id, e2.id, randomUUID()]), 1, 'only dead letters of the subscription count')
      assert.equal(await storage.redeliver('crm', [e3.id]), 0)
      assert.deepEqual(await storage.readRedeliveries('erp', 10), [e3])
      assert.equal(await storage.redeliver('erp'), 2, 'all of them')
      assert.deepEqual(await storage.readRedeliveries('erp', 10), [e1, e3], 'in feed order')
      assert.deepEqual(await storage.readRedeliveries('erp', 1), [e1])
      assert.equal(await storage.recordOutcomes('erp', 'h2', { ...NOTHING, delivered: [e1.id] }), false, 'only the holder records')
      const again = letter(e3, 2, 'still refused')
      assert.equal(await storage.recordOutcomes('erp', 'h1', { ...NOTHING, delivered: [e1.id], deadLetters: [again] }), true)
      assert.deepEqual(await storage.listDeadLetters('erp', { limit: 10 }), [{ event: e3, attempts: 2, error: 'still refused', at: SET_ASIDE }],
        'the delivered one left the list; the other shows its new attempts')
      assert.deepEqual(await storage.readRedeliveries('erp', 10), [], 'set aside again, it waits for another redeliver')
    }
  },
  {
    capability: 'subscriptions',
    name: 'inspectSubscription counts what the subscription has not finished, up to a limit, and its dead letters',
    async run (storage) {
      assert.equal(await storage.inspectSubscription('never', 10), undefined, 'a subscription never leased is unknown')
      const [e1, e2, e3] = await leasedFeed(storage, 'lag', 3) as [OrderEvent, OrderEvent, OrderEvent]
      assert.deepEqual(await storage.inspectSubscription('lag', 10), { lagEvents: 3, oldestAt: e1.at, deadLetters: 0 })
      assert.deepEqual(await storage.inspectSubscription('lag', 2), { lagEvents: 2, oldestAt: e1.at, deadLetters: 0 }, 'counted up to the limit')
      await storage.recordOutcomes('lag', 'h1', { ...NOTHING, finished: [e2.id], deadLetters: [letter(e2)] })
      assert.deepEqual(await storage.inspectSubscription('lag', 10), { lagEvents: 2, oldestAt: e1.at, deadLetters: 1 })
      await storage.checkpoint('lag', 'h1', null, e2.id)
      assert.deepEqual(await storage.inspectSubscription('lag', 10), { lagEvents: 1, oldestAt: e3.at, deadLetters: 1 })
      await storage.checkpoint('lag', 'h1', e2.id, e3.id)
      assert.deepEqual(await storage.inspectSubscription('lag', 10), { lagEvents: 0, oldestAt: null, deadLetters: 1 })
    }
  }
])
