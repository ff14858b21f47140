// Deliveries that keep up: many events at once with each order's in order, retry schedules, dead letters, redelivery and lag.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import orderPlugin, { memoryStorage, type OrderEvent, type OrderStorage } from '../../lib/index.js'
import { describeFailure } from '../../lib/feed/describe-failure.js'
import { buildApp, eventually, logLines, orderBody, testStorage, waitForEvents } from '../helper.js'
import { oddFailures } from '../feed/odd-failures.js'

const quick = { pollInterval: 20, leaseTtl: 200 }

/** An app on `storage`, registered and not ready yet, closed at teardown. */
async function appOn (t: Test, storage: OrderStorage, logger: object | false = false) {
  const app = Fastify({ logger })
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage })
  return app
}

/** `orders` orders, each created and moved through paid, shipped and delivered: four events each. */
async function busyShop (app: Awaited<ReturnType<typeof appOn>>, orders: number): Promise<void> {
  await Promise.all(Array.from({ length: orders }, async (_, i) => {
    const order = await app.orders.create(orderBody({ customerId: `cus_${i}` }))
    for (const status of ['paid', 'shipped', 'delivered']) await app.orders.updateStatus({ id: order.id, status })
  }))
}

t.test('with concurrency, several orders are handled at once, and one order\'s events one at a time in feed order', async t => {
  const app = await appOn(t, await testStorage(t))
  const running = new Set<string>()
  const seen = new Map<string, number[]>()
  let most = 0
  let overlapped = false
  app.orders.subscribe('erp', async (event) => {
    overlapped ||= running.has(event.order.id)
    running.add(event.order.id)
    most = Math.max(most, running.size)
    await sleep(Math.floor(Math.random() * 15))
    seen.set(event.order.id, [...seen.get(event.order.id) ?? [], event.order.version])
    running.delete(event.order.id)
  }, { from: 'start', concurrency: 8, ...quick })
  await app.ready()
  await busyShop(app, 12)
  const feed = await waitForEvents(app, 48)
  await eventually('every event is handled', () => app.orders.subscriptions()[0]!.lastEventId === feed.at(-1)!.id)
  t.equal(seen.size, 12)
  t.ok([...seen.values()].every(versions => versions.join() === '1,2,3,4'), 'each order\'s events once each, in feed order')
  t.ok(most > 1 && most <= 8, `up to concurrency events at once (${most})`)
  t.notOk(overlapped, 'no handler call overlapped another of its order')
  await eventually('the lag is looked at again', () => app.orders.subscriptions()[0]!.lag.events === 0)
  t.match(app.orders.subscriptions()[0], { inFlight: 0, deadLetters: 0, lag: { events: 0, oldestAt: null } })
})

t.test('events finished above an unfinished one are recorded, so a successor redelivers only what was in flight', async t => {
  const storage = await testStorage(t) as Required<Omit<OrderStorage, 'replicas'>>
  const app = await appOn(t, storage)
  let release: () => void = () => {}
  const stuck = new Promise<void>(resolve => { release = resolve })
  const handled: string[] = []
  const first = await app.orders.create(orderBody())
  app.orders.subscribe('erp', async (event) => {
    if (event.order.id === first.id) await stuck
    handled.push(event.id)
  }, { from: 'start', concurrency: 4, ...quick })
  await app.ready()
  for (let i = 0; i < 5; i++) await app.orders.create(orderBody())
  const feed = await waitForEvents(app, 6)
  await eventually('the later orders are handled and recorded', async () =>
    handled.length === 5 && app.orders.subscriptions()[0]!.inFlight === 1)
  await eventually('only the stuck event is left to a successor', async () =>
    (await storage.readSubscription('erp', 100)).map(event => event.id).join() === feed[0]!.id)
  await eventually('the lag counts only the stuck event', () => app.orders.subscriptions()[0]!.lag.events === 1)
  t.match(app.orders.subscriptions()[0], { lastEventId: null, inFlight: 1, lag: { events: 1, oldestAt: feed[0]!.at } },
    'the checkpoint waits for the oldest unfinished event, and the lag counts it')
  release()
  await eventually('the checkpoint moves past all six', () => app.orders.subscriptions()[0]!.lastEventId === feed[5]!.id)
  t.same(handled.slice(0, 5).sort(), feed.slice(1).map(event => event.id).sort())
})

t.test('a backlog longer than a holder reads ahead is delivered in full, once each and in feed order', async t => {
  const app = await buildApp(t)
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  const handled: string[] = []
  app.orders.subscribe('erp', async (event) => { await gate; handled.push(event.id) }, quick)
  await eventually('the subscription holds its lease', () => app.orders.subscriptions()[0]!.active)
  for (let i = 0; i < 250; i++) await app.orders.create(orderBody())
  const feed = await waitForEvents(app, 250)
  release()
  await eventually('every event is handled', () => handled.length >= 250)
  t.same(handled, feed.map(event => event.id))
})

t.test('an event waiting for its next attempt holds no slot: other orders go on', async t => {
  const app = await buildApp(t)
  const attempts: string[] = []
  let failedOnce = false
  app.orders.subscribe('erp', async (event) => {
    attempts.push(event.order.customerId)
    if (event.order.customerId === 'cus_a' && !failedOnce) {
      failedOnce = true
      throw new Error('not yet')
    }
  }, { from: 'start', retry: { schedule: [300] }, ...quick })
  await app.orders.create(orderBody({ customerId: 'cus_a' }))
  await app.orders.create(orderBody({ customerId: 'cus_b' }))
  await waitForEvents(app, 2)
  await eventually('both are handled', () => attempts.length === 3)
  t.same(attempts, ['cus_a', 'cus_b', 'cus_a'], 'with one slot, the other order went first while the failed event waited')
})

t.test('a schedule sets an event aside as a dead letter, its order goes on, and redeliver delivers it with a fresh schedule', async t => {
  const storage = await testStorage(t)
  const app = await appOn(t, storage)
  let refusing = true
  const delivered: Array<[string, number]> = []
  let attempts = 0
  app.orders.subscribe('erp', async (event) => {
    if (event.type === 'created' && event.order.customerId === 'cus_refused' && refusing) {
      attempts++
      throw new Error('the receiver answered HTTP 400')
    }
    delivered.push([event.order.customerId, event.order.version])
  }, { from: 'start', concurrency: 4, retry: { schedule: [0, 10] }, ...quick })
  await app.ready()
  const refused = await app.orders.create(orderBody({ customerId: 'cus_refused' }))
  await app.orders.updateStatus({ id: refused.id, status: 'paid' })
  await app.orders.create(orderBody({ customerId: 'cus_fine' }))
  const [created, paid, other] = await waitForEvents(app, 3) as [OrderEvent, OrderEvent, OrderEvent]
  await eventually('the subscription moves past all three', () => app.orders.subscriptions()[0]!.lastEventId === other.id)
  t.equal(attempts, 3, 'one attempt, then one after each delay')
  t.same(delivered.sort(), [['cus_fine', 1], ['cus_refused', 2]], 'its order\'s later event went on')
  await eventually('the status counts the dead letter', () => app.orders.subscriptions()[0]!.deadLetters === 1)
  t.notOk('failing' in app.orders.subscriptions()[0]!, 'a dead letter is no longer failing')

  // Another instance sees it: dead letters live in the storage.
  const other2 = await appOn(t, storage)
  await other2.ready()
  const { items } = await other2.orders.deadLetters('erp')
  t.match(items, [{ event: created, attempts: 3, error: 'the receiver answered HTTP 400' }])
  t.ok(Date.parse(items[0]!.at) >= Date.parse(created.at), 'at: when it was set aside')
  t.ok(Object.isFrozen(items[0]!.event), 'the event is frozen')
  t.same(await other2.orders.deadLetters('erp', { after: created.id }), { items: [] })
  t.same(await other2.orders.redeliver('erp', { eventIds: [paid.id, 'not-an-event'] }), { count: 0 }, 'ids that are not dead letters are not counted')

  refusing = false
  t.same(await other2.orders.redeliver('erp'), { count: 1 })
  await eventually('the redelivered event is delivered', () => delivered.length === 3)
  t.same(delivered[2], ['cus_refused', 1], 'after its order\'s later event')
  await eventually('it leaves the list', async () => (await app.orders.deadLetters('erp')).items.length === 0)
  await eventually('and the count', () => app.orders.subscriptions()[0]!.deadLetters === 0)
})

t.test('a redelivered event that fails again is set aside again after a fresh schedule, attempted once however often the storage is looked at', async t => {
  const app = await buildApp(t)
  let attempts = 0
  app.orders.subscribe('erp', async () => {
    attempts++
    // Slower than the status looks at the storage (every pollInterval here), which finds it still put back.
    await sleep(100)
    throw new Error(`refused ${attempts}`)
    // A lease that outlasts any stall of a busy machine: a lease lost meanwhile hands the event in flight
    // over to be delivered again, as it may, which is not what this test is about.
  }, { from: 'start', retry: { schedule: [] }, ...quick, leaseTtl: 5_000 })
  await app.orders.create(orderBody())
  await eventually('set aside after one attempt', async () => (await app.orders.deadLetters('erp')).items.length === 1)
  t.same(await app.orders.redeliver('erp'), { count: 1 })
  await eventually('set aside again', async () => (await app.orders.deadLetters('erp')).items[0]?.error === 'refused 2')
  t.match((await app.orders.deadLetters('erp')).items, [{ attempts: 1, error: 'refused 2' }], 'attempts counted afresh')
  await sleep(100)
  t.equal(attempts, 2, 'one attempt for the one redeliver')
})

t.test('a list of put-back dead letters that comes back after its redelivery was recorded does not deliver it again', async t => {
  // A read of the put-back dead letters, on one connection, may answer after the outcome of the redelivery
  // it lists was recorded on another: what it lists is no longer put back.
  const storage = memoryStorage()
  let attempts = 0
  let handling = false
  let listedWhileHandling!: () => void
  const listed = new Promise<void>(resolve => { listedWhileHandling = resolve })
  let setAsideAgain!: () => void
  const recorded = new Promise<void>(resolve => { setAsideAgain = resolve })
  let staleAnswered = false
  let readsAfterStale = 0
  const app = await appOn(t, {
    ...storage,
    async recordOutcomes (name, holder, outcomes) {
      const done = await storage.recordOutcomes(name, holder, outcomes)
      if (attempts === 2 && outcomes.deadLetters.length > 0) setAsideAgain()
      return done
    },
    async readRedeliveries (name, limit) {
      const events = await storage.readRedeliveries(name, limit)
      if (staleAnswered) readsAfterStale++
      if (!handling || events.length === 0) return events
      handling = false
      listedWhileHandling()
      await recorded
      await eventually('the runner has taken the outcome', () => app.orders.subscriptions()[0]!.inFlight === 0)
      staleAnswered = true
      return events
    }
  })
  app.orders.subscribe('erp', async () => {
    attempts++
    if (attempts === 2) {
      handling = true
      await listed
    }
    throw new Error(`refused ${attempts}`)
  }, { from: 'start', retry: { schedule: [] }, ...quick })
  await app.ready()
  await app.orders.create(orderBody())
  await eventually('set aside after one attempt', async () => (await app.orders.deadLetters('erp')).items.length === 1)
  t.same(await app.orders.redeliver('erp'), { count: 1 })
  await eventually('set aside again', async () => (await app.orders.deadLetters('erp')).items[0]?.error === 'refused 2')
  // Two more looks at the dead letters after the late answer: the runner took that answer and went on.
  await eventually('the runner looks again', () => readsAfterStale >= 2)
  t.equal(attempts, 2, 'one attempt for the one redeliver')
  t.match((await app.orders.deadLetters('erp')).items, [{ attempts: 1, error: 'refused 2' }], 'still set aside, waiting for another redeliver')
})

t.test('an event put back while its first delivery is still being recorded is delivered once for that redeliver', async t => {
  // The dead letter is stored and listed, then put back and read, before the checkpoint of its first delivery
  // is stored: recording that delivery must not forget the redelivery of the same event it now waits behind.
  const storage = memoryStorage()
  let attempts = 0
  let listedWhileRecording!: () => void
  const listed = new Promise<void>(resolve => { listedWhileRecording = resolve })
  let checkpointed = false
  let listedAfterCheckpoint = 0
  const app = await appOn(t, {
    ...storage,
    async checkpoint (...args) {
      await listed
      const moved = await storage.checkpoint(...args)
      checkpointed = true
      return moved
    },
    async readRedeliveries (name, limit) {
      const events = await storage.readRedeliveries(name, limit)
      if (events.length > 0) {
        listedWhileRecording()
        if (checkpointed) listedAfterCheckpoint++
      }
      return events
    }
  })
  app.orders.subscribe('erp', async () => {
    attempts++
    // Still put back while the redelivery runs: the runner reads it again, and again.
    if (attempts === 2) await eventually('listed again after the checkpoint', () => listedAfterCheckpoint >= 2)
    throw new Error(`refused ${attempts}`)
  }, { from: 'start', retry: { schedule: [] }, ...quick, leaseTtl: 5_000 })
  await app.ready()
  await app.orders.create(orderBody())
  await eventually('set aside after one attempt', async () => (await app.orders.deadLetters('erp')).items.length === 1)
  t.same(await app.orders.redeliver('erp'), { count: 1 })
  await eventually('set aside again', async () => (await app.orders.deadLetters('erp')).items[0]?.error !== 'refused 1')
  await eventually('nothing in flight', () => app.orders.subscriptions()[0]!.inFlight === 0)
  t.equal(attempts, 2, 'one attempt for the one redeliver')
  t.match((await app.orders.deadLetters('erp')).items, [{ attempts: 1, error: 'refused 2' }], 'still set aside, waiting for another redeliver')
})

t.test('a failure described with characters a database cannot keep, or at great length, is still set aside', async t => {
  const app = await buildApp(t)
  const message = `refused \u0000 \uD800 ${'x'.repeat(5000)}`
  app.orders.subscribe('erp', async () => { throw new Error(message) }, { from: 'start', retry: { schedule: [] }, ...quick })
  await app.orders.create(orderBody())
  await eventually('set aside', async () => (await app.orders.deadLetters('erp')).items.length === 1)
  const { error } = (await app.orders.deadLetters('erp')).items[0]!
  t.equal(error.length, 1000, 'the first 1,000 characters')
  t.ok(error.startsWith('refused \uFFFD \uFFFD xxx'), 'NUL and a lone surrogate replaced')
})

t.test('a handler throwing values that describe themselves badly is retried and dead-lettered, never crashing or stalling', async t => {
  const odd = oddFailures()
  const { lines, stream } = logLines()
  const app = await appOn(t, await testStorage(t), { stream })
  const attempts = new Map<string, number>()
  app.orders.subscribe('erp', async (event) => {
    attempts.set(event.id, (attempts.get(event.id) ?? 0) + 1)
    throw odd[Number(event.order.customerId.slice('cus_'.length))]![1]
  }, { from: 'start', concurrency: 4, retry: { schedule: [0, 5] }, ...quick })
  await app.ready()
  for (let i = 0; i < odd.length; i++) await app.orders.create(orderBody({ customerId: `cus_${i}` }))
  const events = await waitForEvents(app, odd.length)
  await eventually('every event is dead-lettered after its schedule', () => app.orders.subscriptions()[0]!.lastEventId === events.at(-1)!.id)
  t.same([...attempts.values()], odd.map(() => 3), 'one attempt, then one after each delay')
  const { items } = await app.orders.deadLetters('erp')
  t.same(items.map(({ event, attempts, error }) => [event.order.customerId, attempts, error]), odd.map(([, thrown], i) => [`cus_${i}`, 3, describeFailure(thrown)]))
  t.equal(lines.filter(line => line.subscription === 'erp' && line.level === 50).length, 3 * odd.length, 'each failed attempt logged')
  t.same(app.orders.subscriptions()[0]!.inFlight, 0, 'nothing stuck in flight')
})

t.test('a handler throwing an Error whose message is null is retried with backoff until it succeeds, its failure readable', async t => {
  const app = await buildApp(t)
  const seen: string[] = []
  let attempts = 0
  app.orders.subscribe('erp', async () => {
    seen.push(app.orders.subscriptions()[0]!.failing?.error ?? '')
    // What `Object.assign(new Error(), await response.json())` makes of an answer `{ "message": null }`.
    if (attempts++ < 2) throw Object.assign(new Error(), { message: null })
  }, { from: 'start', ...quick, maxBackoff: 5 })
  await app.orders.create(orderBody())
  await eventually('the event is handled after two failures', () => app.orders.subscriptions()[0]!.lastEventId !== null)
  t.same(seen, ['', 'an Error was thrown whose message is null, not a string', 'an Error was thrown whose message is null, not a string'])
})

t.test('subscriptions() shows what is in flight and how far behind the subscription is', async t => {
  const app = await buildApp(t)
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  app.orders.subscribe('slow', async () => { await gate }, { ...quick })
  await eventually('the subscription holds its lease', () => app.orders.subscriptions()[0]!.active)
  for (let i = 0; i < 3; i++) await app.orders.create(orderBody())
  const feed = await waitForEvents(app, 3)
  // The lag may count the events before the runner has handed the first one to the handler.
  await eventually('the first event is in flight and the lag counts the three', () => {
    const { inFlight, lag } = app.orders.subscriptions()[0]!
    return inFlight === 1 && lag.events === 3
  })
  const status = app.orders.subscriptions()[0]!
  t.match(status, { inFlight: 1, deadLetters: 0, lag: { events: 3, oldestAt: feed[0]!.at } })
  t.match(JSON.parse(JSON.stringify(status)), { name: 'slow', inFlight: 1, deadLetters: 0, lag: { events: 3 } }, 'a health check\'s JSON shows them')
  release()
  await eventually('the lag is gone', () => app.orders.subscriptions()[0]!.lag.events === 0)
  t.match(app.orders.subscriptions()[0], { inFlight: 0, lag: { events: 0, oldestAt: null } })
})

t.test('app.close() waits for every handler call in flight and leaves waiting retries to the next holder', async t => {
  const storage = await testStorage(t)
  const first = await appOn(t, storage)
  const calls: string[] = []
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  first.orders.subscribe('erp', async (event) => {
    calls.push(event.order.customerId)
    if (event.order.customerId === 'cus_failing') throw new Error('down')
    await gate
    if (event.order.customerId === 'cus_b') throw new Error('down while closing')
  }, { from: 'start', concurrency: 4, retry: { schedule: [3_600_000] }, ...quick })
  await first.ready()
  for (const customerId of ['cus_failing', 'cus_a', 'cus_b']) await first.orders.create(orderBody({ customerId }))
  await waitForEvents(first, 3)
  await eventually('two calls are in flight and one waits for its retry', () => calls.length === 3 && first.orders.subscriptions()[0]!.inFlight === 3)
  let closed = false
  const closing = first.close().then(() => { closed = true })
  await sleep(30)
  t.equal(closed, false, 'close waits for the calls in flight')
  release()
  await closing

  const second = await appOn(t, storage)
  const redelivered: string[] = []
  second.orders.subscribe('erp', async (event) => { redelivered.push(event.order.customerId) }, { from: 'start', ...quick })
  await second.ready()
  await eventually('the unfinished events are delivered by the next holder', () => redelivered.length === 2)
  await sleep(50)
  t.same(redelivered, ['cus_failing', 'cus_b'], 'the event whose retry was waiting and the one that failed while closing; the handled one was recorded')
  t.equal(calls.length, 3, 'no retry started while closing')
})

t.test('a storage failure while recording progress is logged, and what was not recorded is delivered again', async t => {
  const inner = memoryStorage()
  let failures = 1
  const storage: OrderStorage = {
    ...inner,
    checkpoint: async (...args) => {
      if (failures-- > 0) throw new Error('connection lost')
      return inner.checkpoint(...args)
    }
  }
  const { lines, stream } = logLines()
  const app = await appOn(t, storage, { stream })
  const delivered: string[] = []
  app.orders.subscribe('erp', async (event) => { delivered.push(event.id) }, { from: 'start', concurrency: 2, ...quick })
  await app.ready()
  await app.orders.create(orderBody())
  const [event] = await waitForEvents(app, 1)
  await eventually('the event is recorded at last', () => app.orders.subscriptions()[0]!.lastEventId === event!.id)
  t.same(delivered, [event!.id, event!.id], 'delivered again: at least once')
  t.ok(lines.some(line => line.level === 40 && line.err?.message === 'connection lost' && /could not reach the storage/.test(line.msg)))
})

t.test('a holder that loses its lease while handlers run records nothing of them', async t => {
  const inner = memoryStorage()
  let stolen = false
  const storage: OrderStorage = { ...inner, lease: async (request) => stolen ? { held: false, lastEventId: null } : inner.lease(request) }
  const app = await appOn(t, storage)
  let release: () => void = () => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  app.orders.subscribe('erp', async () => { await gate }, { from: 'start', concurrency: 2, pollInterval: 20, leaseTtl: 60 })
  await app.ready()
  await app.orders.create(orderBody())
  await eventually('the handler runs', () => app.orders.subscriptions()[0]!.inFlight === 1)
  stolen = true
  await eventually('the lease is found lost', () => !app.orders.subscriptions()[0]!.active)
  release()
  await sleep(50)
  t.equal(app.orders.subscriptions()[0]!.lastEventId, null, 'the handled event is left to the next holder')
  t.equal((await inner.readSubscription('erp', 10)).length, 1)
})

t.test('a record the storage refuses ends the holder\'s deliveries; the event is handled again', async t => {
  const inner = memoryStorage()
  let refusals = 1
  const storage: OrderStorage = { ...inner, recordOutcomes: async (...args) => refusals-- > 0 ? false : inner.recordOutcomes(...args) }
  const app = await appOn(t, storage)
  let attempts = 0
  app.orders.subscribe('erp', async () => { attempts++; throw new Error('refused') }, { from: 'start', retry: { schedule: [] }, ...quick })
  await app.ready()
  await app.orders.create(orderBody())
  await eventually('the dead letter is stored at the second try', async () => (await app.orders.deadLetters('erp')).items.length === 1)
  t.equal(attempts, 2, 'the event whose outcome was refused is delivered again')
})

t.test('deadLetters and redeliver refuse an unknown subscription and bad arguments', async t => {
  const app = await buildApp(t)
  app.orders.subscribe('mine', async () => {}, quick)
  t.same(await app.orders.deadLetters('mine'), { items: [] }, 'a subscription of this app is known before it stores anything')
  t.same(await app.orders.redeliver('mine'), { count: 0 })
  await t.rejects(app.orders.deadLetters('unknown'), { code: 'ORDER_INVALID_SUBSCRIPTION', message: /no subscription is named "unknown"/ })
  await t.rejects(app.orders.redeliver('unknown'), { code: 'ORDER_INVALID_SUBSCRIPTION' })
  await t.rejects(app.orders.deadLetters('bad name'), { code: 'ORDER_INVALID_SUBSCRIPTION' })
  for (const limit of [0, 1001, 1.5, '10']) {
    await t.rejects(app.orders.deadLetters('mine', { limit } as never), { code: 'FST_ERR_VALIDATION' }, `limit ${limit}`)
  }
  await t.rejects(app.orders.deadLetters('mine', { cursor: 'x' } as never), { code: 'FST_ERR_VALIDATION' })
  await t.rejects(app.orders.redeliver('mine', { eventIds: 'all' } as never), { code: 'FST_ERR_VALIDATION' })
  await t.rejects(app.orders.deadLetters('mine', { after: 'not-an-event' }), { code: 'ORDER_EVENT_NOT_FOUND' })
  await t.rejects(app.orders.deadLetters('mine', { after: randomUUID() }), { code: 'ORDER_EVENT_NOT_FOUND' }, 'an event id the feed does not hold')
})

t.test('without subscriptions in the storage, deadLetters and redeliver say so', async t => {
  const { create, get, list, replace, purgeIdempotencyKeys } = memoryStorage()
  const app = await buildApp(t, { storage: { create, get, list, replace, purgeIdempotencyKeys } })
  await t.rejects(app.orders.deadLetters('erp'), { code: 'ORDER_INVALID_SUBSCRIPTION', message: /^fastify-order: deadLetters: .*this storage has no lease method/ })
  await t.rejects(app.orders.redeliver('erp'), { code: 'ORDER_INVALID_SUBSCRIPTION', message: /^fastify-order: redeliver: .*this storage has no lease method/ })
})

t.test('subscribe refuses a concurrency or retry out of bounds, naming the limit', async t => {
  const app = await buildApp(t)
  const handler = async () => {}
  const cases: Array<[string, object, RegExp]> = [
    ['a concurrency of 0', { concurrency: 0 }, /^fastify-order: subscribe: concurrency must be an integer from 1 to 256, got 0$/],
    ['a concurrency past 256', { concurrency: 257 }, /concurrency must be an integer from 1 to 256, got 257/],
    ['a fractional concurrency', { concurrency: 1.5 }, /concurrency must be an integer from 1 to 256/],
    ['an unknown retry', { retry: 'always' }, /retry must be "forever" or \{ schedule: \[ms, …\] \} with at most 20 delays, got "always"/],
    ['a retry without a schedule', { retry: {} }, /retry must be "forever" or .*, got an object with no keys/],
    ['a retry with another key', { retry: { schedule: [], tries: 3 } }, /got an object with schedule, tries/],
    ['a retry that is an array', { retry: [1000] }, /got an array/],
    ['a retry that is a number', { retry: 5 }, /got 5/],
    ['a retry that is a function', { retry: () => 1000 }, /got a function/],
    ['a schedule that is not an array', { retry: { schedule: 1000 } }, /^fastify-order: subscribe: retry.schedule must be an array of at most 20 integers from 0 to 2147483647 ms, got 1000$/],
    ['a schedule of 21 delays', { retry: { schedule: Array(21).fill(1000) } }, /retry.schedule must be an array of at most 20 integers .*, got 21 of them/],
    ['a negative delay', { retry: { schedule: [1000, -1] } }, /got -1 at index 1/],
    ['a delay past the longest timer', { retry: { schedule: [2 ** 31] } }, /from 0 to 2147483647 ms, got 2147483648 at index 0/]
  ]
  for (const [what, options, message] of cases) {
    t.throws(() => app.orders.subscribe('s', handler, options as never), { code: 'ORDER_INVALID_SUBSCRIPTION', message }, what)
  }
  t.doesNotThrow(() => app.orders.subscribe('bounds', handler, { concurrency: 256, retry: { schedule: [0, 2 ** 31 - 1, ...Array(18).fill(5)] } }))
  t.doesNotThrow(() => app.orders.subscribe('forever', handler, { retry: 'forever' }))
})
