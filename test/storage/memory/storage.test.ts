import t from 'tap'
import { storeEvent } from '../../../lib/storage/conformance/fixtures.js'
import { createdEvent, statusChangedEvent } from '../../../lib/feed/events.js'
import { memoryStorage } from '../../../lib/index.js'
import type { StorageListQuery } from '../../../lib/index.js'
import { buildApp, createOrder, storedOrder, storeOrder } from '../../helper.js'

t.test('memoryStorage refuses a second order with an id it already holds', async t => {
  const storage = memoryStorage()
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  await t.rejects(storeOrder(storage, { ...order, customerId: 'someone_else' }), /already stored/)
  t.equal((await storage.get(order.id))!.customerId, order.customerId, 'the first order is untouched')
  t.equal((await storage.list({ order: 'desc', limit: 10 })).length, 1)
})

t.test('memoryStorage finds no order by an id that is not a string, even one that reads as a stored id', async t => {
  const storage = memoryStorage()
  const app = await buildApp(t, { storage })
  const order = await createOrder(app)
  for (const id of [[order.id], { toString: () => order.id, length: order.id.length }, 1]) {
    t.equal(await storage.get(id as never), undefined, `get(${JSON.stringify(id)})`)
    t.equal(await storage.replace({ ...order, id: id as never, version: 2 }, 1, statusChangedEvent({ ...order, version: 2 }, 'pending')), false, 'and no replace')
  }
  t.equal((await storage.get(order.id))!.version, 1, 'the order is as it was')
})

t.test('memoryStorage: an order whose event was refused is not found, and may be stored later; the next order takes its number', async t => {
  const storage = memoryStorage()
  const first = storedOrder({ id: 'ord_first' })
  const firstEvent = createdEvent(first)
  await storeEvent(storage, firstEvent)
  const refused = storedOrder({ id: 'ord_refused' })
  await t.rejects(storeEvent(storage, { ...createdEvent(refused), id: firstEvent.id }), /already stored/)
  const next = storedOrder({ id: 'ord_next' })
  await storeOrder(storage, next)
  t.equal(await storage.get('ord_refused'), undefined, 'the refused order is not found where the next one now is')
  t.equal((await storage.get('ord_next'))!.number, 2, 'the next order takes the number the refused one would have had')
  await storeOrder(storage, refused)
  t.same([(await storage.get('ord_refused'))!.number, (await storage.get('ord_next'))!.number, (await storage.get('ord_first'))!.number], [3, 2, 1],
    'stored later, it is found, and so is every other order')
})

t.test('memoryStorage lists the feed exactly as before once thousands of purged events are compacted away', async t => {
  const storage = memoryStorage()
  const events = []
  for (let i = 0; i < 3000; i++) {
    const order = storedOrder({ createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() })
    const event = createdEvent(order)
    await storeEvent(storage, event)
    events.push(event)
  }
  let purged = 0
  for (let batch = 0; batch < 10; batch++) purged += await storage.purgeEvents(events[2000]!.at, 200)
  t.equal(purged, 2000, 'every event before the cutoff, a batch at a time')
  t.equal(await storage.listEvents({ after: events[1999]!.id, limit: 1 }), undefined, 'a purged id names no event')
  t.same(await storage.listEvents({ limit: 2 }), events.slice(2000, 2002), 'the feed starts at the oldest kept')
  t.same(await storage.listEvents({ after: events[2500]!.id, limit: 3 }), events.slice(2501, 2504), 'positions still match after compaction')
  t.same((await storage.lease({ name: 'late', holder: 'h', ttl: 1000, from: 'start' })).held, true)
  t.same(await storage.readSubscription('late', 2), events.slice(2000, 2002), 'a new subscription from start reads from the oldest kept')
})

t.test('memoryStorage gives back every event as it was stored, a move and a create stamped apart from its order included, and purges each by its own time', async t => {
  const storage = memoryStorage()
  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString()
  const order = storedOrder({ createdAt: at(0), updatedAt: at(0) })
  const created = createdEvent(order)
  await storeEvent(storage, created)
  const moved = { ...order, number: 1, status: 'paid', version: 2, updatedAt: at(2), statusHistory: [...order.statusHistory, { status: 'paid', at: at(2) }] }
  const move = statusChangedEvent(moved, 'pending')
  t.equal(await storage.replace(moved, 1, move), true)
  const other = storedOrder({ createdAt: at(3), updatedAt: at(3) })
  // A created event whose time is not its order's creation (a caller of the storage may give one).
  const late = { ...createdEvent(other), at: at(4) }
  await storeEvent(storage, late)
  const events = (await storage.listEvents({ limit: 10 }))!
  t.same(events, [{ ...created, order: { ...order, number: 1 } }, move, { ...late, order: { ...other, number: 2 } }], 'each event as it was stored')
  t.equal(await storage.purgeEvents(at(2), 10), 1, 'the move at the cutoff stops the purge')
  t.equal(await storage.purgeEvents(at(4), 10), 1, 'the move goes by its own time')
  t.same(await storage.listEvents({ limit: 10 }), [events[2]], 'and the late create is kept until its own time')
  t.equal(await storage.purgeEvents(at(5), 10), 1)
})

t.test('memoryStorage purges expired idempotency keys a batch at a time, however many were made', async t => {
  const storage = memoryStorage()
  const claim = (key: string, expiresAt: string) => ({ key, fingerprint: key, expiresAt })
  // More keys than the queue's compaction threshold, so the compaction runs too.
  for (let i = 0; i < 1100; i++) await storeOrder(storage, storedOrder(), claim(`k${i}`, '2026-01-02T00:00:00.000Z'))
  // k0 expired and was taken over: its new claim is queued again and outlives the purge.
  const takenOver = storedOrder({ createdAt: '2026-01-03T00:00:00.000Z' })
  await storeOrder(storage, takenOver, claim('k0', '2026-01-09T00:00:00.000Z'))
  await storeOrder(storage, storedOrder({ createdAt: '2026-01-03T00:00:00.000Z' }), claim('live', '2026-01-09T00:00:00.000Z'))
  const now = '2026-01-05T00:00:00.000Z'
  t.equal(await storage.purgeIdempotencyKeys(now, 1000), 1000, 'a batch is at most the limit')
  t.equal(await storage.purgeIdempotencyKeys(now, 1000), 99, 'the rest of the expired keys (k0\'s first claim was replaced, not purged)')
  t.equal(await storage.purgeIdempotencyKeys(now, 1000), 0, 'live keys stay')
  const replay = await storeOrder(storage, storedOrder({ createdAt: now }), claim('k0', '2026-01-10T00:00:00.000Z'))
  t.match(replay, { created: false, order: takenOver }, 'the taken-over key still answers with its order')
  t.match(await storeOrder(storage, storedOrder({ createdAt: now }), claim('k5', '2026-01-10T00:00:00.000Z')), { created: true }, 'a purged key is free')
})

t.test('a store\'s page of a reference walks only that store\'s orders of it, however many other stores share it', async t => {
  const storage = memoryStorage()
  let walked = 0
  /** A page query that counts each order the page checks: a check reads its balance filter once. */
  const counting = (query: StorageListQuery): StorageListQuery =>
    Object.defineProperty(query, 'balance', { get () { walked++; return undefined }, enumerable: false })
  const minute = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 60_000).toISOString()
  for (let i = 0; i < 2000; i++) await storeOrder(storage, storedOrder({ customerId: `cus_${i}`, reference: 'cart_1', store: `shop_${i % 50}`, createdAt: minute(i) }))
  for (let i = 0; i < 3; i++) await storeOrder(storage, storedOrder({ customerId: `cus_eu_${i}`, reference: 'cart_1', store: 'eu', createdAt: minute(i) }))
  const page = await storage.list(counting({ reference: 'cart_1', store: 'eu', order: 'desc', limit: 21 }))
  t.same(page.map(order => order.customerId), ['cus_eu_2', 'cus_eu_1', 'cus_eu_0'])
  t.equal(walked, 3, 'the other stores\' 2,000 orders of the reference are never walked')
  walked = 0
  t.equal((await storage.list(counting({ reference: 'cart_1', store: 'shop_7', statuses: ['pending'], order: 'asc', limit: 50 }))).length, 40, 'a status is checked on them')
  t.equal(walked, 40, 'on the store\'s 40 orders of the reference only')
  t.equal((await storage.list({ reference: 'cart_1', order: 'asc', limit: 5 })).length, 5, 'a reference alone still walks every store')
})
