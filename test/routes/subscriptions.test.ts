// Subscriptions: the feed delivered at least once, in feed order, one instance at a time, checkpointed after the handler.
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import orderPlugin, { memoryStorage, type OrderEvent, type OrderStorage } from '../../lib/index.js'
import { buildApp, createOrder, eventually, logLines, orderBody, waitForEvents } from '../helper.js'

const quick = { pollInterval: 20, leaseTtl: 200 }

/** A handler that records what it gets, and the events seen so far. */
function recorder () {
  const events: OrderEvent[] = []
  return { events, handler: async (event: OrderEvent) => { events.push(event) } }
}

/** An app on `storage` that is registered but not ready yet. */
async function registeredApp (t: Test, storage: OrderStorage, logger: object | false = false) {
  const app = Fastify({ logger })
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage })
  return app
}

t.test('a subscription from start delivers every event in feed order, from when the app is ready', async t => {
  const storage = memoryStorage()
  const app = await registeredApp(t, storage)
  const { events, handler } = recorder()
  const order = await app.orders.create({ customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 5 }] })
  app.orders.subscribe('fulfilment', handler, { from: 'start', ...quick })
  await new Promise(resolve => setTimeout(resolve, 50))
  t.same(events, [], 'nothing is delivered before the app is ready')
  await app.ready()
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  await eventually('both events are delivered', () => events.length === 2)
  t.same(events, await waitForEvents(app, 2), 'the events of the feed, in its order')
  t.ok(Object.isFrozen(events[0]), 'the handler gets a frozen event')
  await eventually('the checkpoint follows', () => app.orders.subscriptions()[0]?.lastEventId === events[1]!.id)
  t.same(app.orders.subscriptions(), [{ name: 'fulfilment', lastEventId: events[1]!.id, active: true }])
})

t.test('a subscription from now gets only the events stored after it first starts', async t => {
  const app = await buildApp(t)
  await createOrder(app, { customerId: 'cus_before' })
  await waitForEvents(app, 1)
  const { events, handler } = recorder()
  app.orders.subscribe('emails', handler, quick)
  await eventually('the subscription holds its lease', () => app.orders.subscriptions()[0]!.active)
  const later = await createOrder(app, { customerId: 'cus_after' })
  await eventually('the later event is delivered', () => events.length === 1)
  t.same(events.map(event => event.order.id), [later.id])
  await new Promise(resolve => setTimeout(resolve, 60))
  t.equal(events.length, 1, 'nothing from before it started')
})

t.test('this instance\'s own events are delivered without waiting for a poll', async t => {
  const app = await buildApp(t)
  const { events, handler } = recorder()
  app.orders.subscribe('prompt', handler, { pollInterval: 3_600_000, leaseTtl: 7_200_000 })
  await eventually('the subscription holds its lease', () => app.orders.subscriptions()[0]!.active)
  const order = await createOrder(app)
  await eventually('the event is delivered well before the hour-long poll', () => events.length === 1)
  t.equal(events[0]!.order.id, order.id)
})

t.test('a failing handler is logged with the event id and retried with backoff; nothing moves past it', async t => {
  const { lines, stream } = logLines()
  const app = await registeredApp(t, memoryStorage(), { stream })
  const delivered: string[] = []
  let failures = 0
  app.orders.subscribe('erp', async (event) => {
    if (event.type === 'created' && failures < 3) {
      failures++
      throw new Error(`erp down ${failures}`)
    }
    delivered.push(event.type)
  }, { from: 'start', ...quick })
  await app.ready()
  const order = await app.orders.create({ customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 5 }] })
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  const [created] = await waitForEvents(app, 1)
  await eventually('the handler failed twice', () => failures >= 2)
  t.same(delivered, [], 'the next event waits for the failing one')
  t.match(app.orders.subscriptions()[0], { name: 'erp', lastEventId: null, failing: { eventId: created!.id, error: /^erp down/ } })
  await eventually('the event is handled after its retries', () => delivered.length === 2)
  t.same(delivered, ['created', 'statusChanged'], 'in feed order')
  t.notOk('failing' in app.orders.subscriptions()[0]!, 'no longer failing')
  const logged = lines.filter(line => line.eventId === created!.id)
  t.equal(logged.length, 3, 'each failure is logged')
  t.match(logged, [{ level: 50, subscription: 'erp', attempts: 1 }, { attempts: 2 }, { attempts: 3, err: { message: 'erp down 3' } }])
  const times = logged.map(line => line.time as number)
  t.ok(times[2]! - times[1]! >= times[1]! - times[0]!, 'each retry waits at least as long as the one before')
})

t.test('a handler that throws something that is not an Error fails like any other: backoff, a readable failing entry', async t => {
  const circular: Record<string, unknown> = {}
  circular.self = circular
  const thrown: unknown[] = ['erp said no', null, undefined, 42, Object.create(null), { status: 503 }, Symbol('odd'), 10n, circular]
  const { lines, stream } = logLines()
  const app = await registeredApp(t, memoryStorage(), { stream })
  const errors: string[] = []
  let attempts = 0
  app.orders.subscribe('odd', async () => {
    errors.push(app.orders.subscriptions()[0]!.failing?.error ?? '')
    if (attempts < thrown.length) throw thrown[attempts++]
  }, { from: 'start', ...quick, maxBackoff: 5 })
  await app.ready()
  await app.orders.create({ customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 5 }] })
  await eventually('the event is handled after every odd failure', () => app.orders.subscriptions()[0]!.lastEventId !== null)
  t.same(errors.slice(1), [
    'erp said no', 'null was thrown', 'undefined was thrown', 'a number was thrown: 42', 'an object was thrown: {}',
    'an object was thrown: {"status":503}', 'a symbol was thrown', 'a bigint was thrown', 'an object was thrown'
  ], 'each failure described, attempts counted')
  const failures = lines.filter(line => line.subscription === 'odd' && line.level === 50)
  t.same(failures.map(line => line.attempts), [1, 2, 3, 4, 5, 6, 7, 8, 9], 'each logged as a failed attempt of the handler')
  t.notOk(lines.some(line => /could not reach the storage/.test(line.msg)), 'never taken for a storage failure')
})

t.test('app.close() waits for the handler in flight, checkpoints it, and the next start resumes after it', async t => {
  const storage = memoryStorage()
  const first = await registeredApp(t, storage)
  let release: (() => void) | undefined
  const handled: string[] = []
  first.orders.subscribe('shipping', async (event) => {
    await new Promise<void>(resolve => { release = resolve })
    handled.push(event.id)
  }, { from: 'start', ...quick })
  await first.ready()
  await createOrder(first)
  await createOrder(first)
  await eventually('the first event is in the handler', () => release !== undefined)
  let closed = false
  const closing = first.close().then(() => { closed = true })
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(closed, false, 'close waits for the handler')
  release!()
  await closing
  t.equal(handled.length, 1, 'the handler in flight finished; no other event started')

  const second = await registeredApp(t, storage)
  const { events, handler } = recorder()
  second.orders.subscribe('shipping', handler, { from: 'start', ...quick })
  await second.ready()
  await eventually('the second event is delivered', () => events.length === 1)
  const all = await waitForEvents(second, 2)
  t.same(events.map(event => event.id), [all[1]!.id], 'the handled event is not delivered again')
})

t.test('app.close() during a failing handler\'s backoff ends the retries at once', async t => {
  const app = await registeredApp(t, memoryStorage())
  let attempts = 0
  // A handler may throw anything, not only an Error: the status shows it as text.
  app.orders.subscribe('stuck', async () => { attempts++; throw 'always down' }, { from: 'start', ...quick, maxBackoff: 3_600_000 }) // eslint-disable-line no-throw-literal
  await app.ready()
  await createOrder(app)
  // The second attempt waits 200 ms, the fourth 800 ms; closing in between ends the wait.
  await eventually('the handler failed and is backing off', () => attempts === 2)
  await app.close()
  t.equal(attempts, 2, 'no attempt after close')
  t.match(app.orders.subscriptions()[0], { active: false, lastEventId: null, failing: { attempts: 2, error: 'always down' } }, 'the event stays unhandled')
})

t.test('instances sharing a storage share a subscription: one runs it, another takes over when it closes', async t => {
  const storage = memoryStorage()
  const delivered: Array<[string, string]> = []
  const apps = await Promise.all(['a', 'b'].map(async name => {
    const app = await registeredApp(t, storage)
    app.orders.subscribe('billing', async (event) => { delivered.push([name, event.id]) }, { from: 'start', ...quick })
    await app.ready()
    return app
  }))
  const [a, b] = apps as [typeof apps[0], typeof apps[0]]
  await eventually('one instance holds the lease', () => a.orders.subscriptions()[0]!.active !== b.orders.subscriptions()[0]!.active)
  for (let i = 0; i < 10; i++) await createOrder(i % 2 === 0 ? a : b)
  await eventually('every event is delivered', () => delivered.length === 10)
  const [holder, other] = a.orders.subscriptions()[0]!.active ? [a, b] : [b, a]
  const holderName = holder === a ? 'a' : 'b'
  t.ok(delivered.every(([name]) => name === holderName), 'only the lease holder ran the handler')
  t.same(new Set(delivered.map(([, id]) => id)).size, 10, 'each event once')

  await holder.close()
  await eventually('the other instance takes over', () => other.orders.subscriptions()[0]!.active)
  await createOrder(other)
  await eventually('the new event is delivered by the other instance', () => delivered.length === 11)
  t.not(delivered[10]![0], holderName)
})

t.test('an instance that stops answering is replaced once its lease lapses', async t => {
  const inner = memoryStorage()
  let dead = false
  const dying: OrderStorage = {
    ...inner,
    lease: async (request) => { if (dead) throw new Error('process frozen'); return inner.lease(request) }
  }
  const { lines, stream } = logLines()
  const a = await registeredApp(t, dying, { stream })
  const b = await registeredApp(t, inner)
  const { events, handler } = recorder()
  a.orders.subscribe('audit', async () => {}, { from: 'start', ...quick })
  await a.ready()
  await eventually('a holds the lease', () => a.orders.subscriptions()[0]!.active)
  b.orders.subscribe('audit', handler, { from: 'start', ...quick })
  await b.ready()
  dead = true
  await createOrder(b)
  await eventually('b takes over after the lease TTL and delivers', () => events.length === 1)
  t.ok(lines.some(line => line.level === 40 && line.subscription === 'audit' && line.err?.message === 'process frozen'),
    'the failing storage is logged and retried, not thrown')
})

t.test('a holder that loses its lease mid-event stops retrying, and its checkpoint is refused', async t => {
  const inner = memoryStorage()
  let stolen = false
  const storage: OrderStorage = {
    ...inner,
    lease: async (request) => stolen ? { held: false, lastEventId: null } : inner.lease(request),
    checkpoint: async (...args) => stolen ? false : inner.checkpoint(...args)
  }
  const app = await registeredApp(t, storage)
  let attempts = 0
  app.orders.subscribe('lost', async () => { attempts++; throw new Error('still failing') }, { from: 'start', pollInterval: 20, leaseTtl: 60, maxBackoff: 10 })
  await app.ready()
  await createOrder(app)
  await eventually('the handler is retried', () => attempts >= 2)
  stolen = true
  await eventually('the lease is found lost', () => !app.orders.subscriptions()[0]!.active)
  const after = attempts
  await new Promise(resolve => setTimeout(resolve, 100))
  t.ok(attempts <= after + 1, 'no more retries once the lease is lost')
})

t.test('a checkpoint refused after the handler ends the batch: the event is delivered again', async t => {
  const inner = memoryStorage()
  let refuse = 1
  const storage: OrderStorage = {
    ...inner,
    checkpoint: async (...args) => refuse-- > 0 ? false : inner.checkpoint(...args)
  }
  const app = await registeredApp(t, storage)
  const { events, handler } = recorder()
  app.orders.subscribe('redeliver', handler, { from: 'start', ...quick })
  await app.ready()
  await createOrder(app)
  await createOrder(app)
  await eventually('both events are checkpointed', async () =>
    app.orders.subscriptions()[0]!.lastEventId === (await waitForEvents(app, 2))[1]!.id)
  t.same(events.map(event => event.order.id).slice(0, 2), [events[0]!.order.id, events[0]!.order.id],
    'the event whose checkpoint was refused is delivered again: at least once')
})

t.test('a lease that cannot be renewed while the handler works is logged and retried', async t => {
  const inner = memoryStorage()
  let renewals = 0
  let working = false
  const storage: OrderStorage = {
    ...inner,
    lease: async (request) => {
      if (working) {
        renewals++
        throw new Error('renewal failed')
      }
      return inner.lease(request)
    }
  }
  const { lines, stream } = logLines()
  const app = await registeredApp(t, storage, { stream })
  let finish: () => void = () => {}
  app.orders.subscribe('slow', async () => {
    working = true
    await new Promise<void>(resolve => { finish = resolve })
    working = false
  }, { from: 'start', pollInterval: 20, leaseTtl: 60 })
  await app.ready()
  await createOrder(app)
  await eventually('a renewal was tried while the handler worked', () => renewals > 0)
  finish()
  t.ok(lines.some(line => line.level === 40 && /could not renew its lease/.test(line.msg)))
})

t.test('a storage that cannot release the lease at close is logged; close still ends', async t => {
  const inner = memoryStorage()
  const { lines, stream } = logLines()
  const app = await registeredApp(t, { ...inner, release: async () => { throw new Error('gone') } }, { stream })
  app.orders.subscribe('closing', async () => {}, quick)
  await app.ready()
  await eventually('it holds the lease', () => app.orders.subscriptions()[0]!.active)
  await app.close()
  t.ok(lines.some(line => line.level === 40 && /could not release its lease/.test(line.msg)))
  t.equal(app.orders.subscriptions()[0]!.active, false)
})

t.test('a subscription lease may not outlast eventRetention, so retention never purges what it still needs', async t => {
  const app = await buildApp(t, { eventRetention: 20_000 })
  t.throws(() => app.orders.subscribe('s', async () => {}, { leaseTtl: 20_001 }),
    { code: 'ORDER_INVALID_SUBSCRIPTION', message: /leaseTtl \(20001\) must be at most the plugin's eventRetention \(20000\)/ })
  t.throws(() => app.orders.subscribe('s', async () => {}), { message: /leaseTtl \(30000\)/ }, 'the default lease too')
  t.doesNotThrow(() => app.orders.subscribe('s', async () => {}, { leaseTtl: 20_000 }))
})

t.test('subscribe refuses bad arguments with ORDER_INVALID_SUBSCRIPTION', async t => {
  const app = await buildApp(t)
  const handler = async () => {}
  const cases: Array<[string, unknown[], RegExp]> = [
    ['an empty name', ['', handler], /name must be 1 to 100/],
    ['a name with a space', ['my sub', handler], /name must be 1 to 100/],
    ['a name too long', ['x'.repeat(101), handler], /name must be 1 to 100/],
    ['a handler that is not a function', ['s', 'handler'], /handler of subscription "s" must be a function/],
    ['options that are not an object', ['s', handler, 5], /options must be an object/],
    ['options that are an array', ['s', handler, []], /options must be an object like \{ from: "start" \}/],
    ['an unknown option', ['s', handler, { form: 'start' }], /^fastify-order: subscribe: unknown option "form"; the options are from, pollInterval, leaseTtl, maxBackoff, concurrency, retry, timeout$/],
    ['an unknown from', ['s', handler, { from: 'beginning' }], /from must be "now" or "start", got "beginning"/],
    ['a pollInterval of 0', ['s', handler, { pollInterval: 0 }], /^fastify-order: subscribe: pollInterval must be an integer from 1 to 2147483647 ms, got 0$/],
    ['a leaseTtl too short for the poll', ['s', handler, { pollInterval: 1000, leaseTtl: 1500 }], /leaseTtl \(1500\) must be at least twice pollInterval/],
    ['a fractional maxBackoff', ['s', handler, { maxBackoff: 1.5 }], /maxBackoff must be an integer from 1 to 2147483647 ms, got 1.5/],
    // Node.js fires a timer longer than 2^31 - 1 ms at once: it would poll or renew every millisecond.
    ['a pollInterval past the longest timer', ['s', handler, { pollInterval: 2 ** 31, leaseTtl: 2 ** 33 }], /pollInterval must be an integer from 1 to 2147483647 ms, got 2147483648/],
    ['a leaseTtl past the longest timer', ['s', handler, { leaseTtl: 3e9 }], /leaseTtl must be an integer from 1 to 2147483647 ms, got 3000000000/],
    ['a maxBackoff past the longest timer', ['s', handler, { maxBackoff: 2 ** 31 }], /maxBackoff must be an integer from 1 to 2147483647 ms, got 2147483648/],
    ['a timeout of 0', ['s', handler, { timeout: 0 }], /^fastify-order: subscribe: timeout must be an integer from 1 to 2147483647 ms, got 0$/],
    ['a timeout past the longest timer', ['s', handler, { timeout: 2 ** 31 }], /timeout must be an integer from 1 to 2147483647 ms, got 2147483648/],
    ['a timeout that is a string', ['s', handler, { timeout: '30s' }], /timeout must be an integer from 1 to 2147483647 ms, got "30s"/]
  ]
  for (const [what, args, message] of cases) {
    t.throws(() => (app.orders.subscribe as (...args: unknown[]) => unknown)(...args), { code: 'ORDER_INVALID_SUBSCRIPTION', message }, what)
  }
  app.orders.subscribe('taken', handler)
  t.throws(() => app.orders.subscribe('taken', handler), { code: 'ORDER_INVALID_SUBSCRIPTION', message: /already has a subscription named "taken"/ })
  await app.close()
  t.throws(() => app.orders.subscribe('late', handler), { code: 'ORDER_INVALID_SUBSCRIPTION', message: /the app is closing/ })
  t.same(app.orders.subscriptions().map(subscription => subscription.name), ['taken'])
})

t.test('a handler that never answers times out: a failed attempt, its signal aborted, retried and dead-lettered by its schedule', async t => {
  const app = await buildApp(t)
  // Both orders are stored before the subscription starts, so how long a create takes cannot reorder the calls.
  const stuck = await app.orders.create(orderBody({ customerId: 'cus_stuck' }))
  const fine = await app.orders.create(orderBody({ customerId: 'cus_fine' }))
  const calls: Array<{ customerId: string, signal: AbortSignal, firstAborted: boolean }> = []
  app.orders.subscribe('stuck', (event, { signal }) => {
    calls.push({ customerId: event.order.customerId, signal, firstAborted: calls[0]?.signal.aborted ?? false })
    // The first order's handler never answers; the second's does at once.
    return event.order.customerId === 'cus_stuck' ? new Promise(() => {}) : undefined
  }, { from: 'start', ...quick, timeout: 50, retry: { schedule: [10] }, concurrency: 1 })
  const [created, other] = await waitForEvents(app, 2)
  await eventually('the stuck event is dead-lettered and the other delivered', async () =>
    app.orders.subscriptions()[0]!.lastEventId === other!.id && (await app.orders.deadLetters('stuck')).items.length === 1)
  const stuckCalls = calls.filter(call => call.customerId === 'cus_stuck')
  const fineCalls = calls.filter(call => call.customerId === 'cus_fine')
  t.equal(calls[0]!.customerId, 'cus_stuck', 'the stuck order first')
  // With one slot, the other order can only start once the hung call gave its slot up, at its timeout.
  t.equal(fineCalls.length, 1, 'its slot freed at the timeout: the next order went on')
  t.ok(fineCalls[0]!.firstAborted, 'the next order started after the first call was aborted')
  t.equal(stuckCalls.length, 2, 'tried once, then once more after the delay')
  t.ok(stuckCalls.every(call => call.signal.aborted), 'each stuck call saw its signal abort')
  t.match(stuckCalls[0]!.signal.reason, { code: 'ORDER_HANDLER_TIMEOUT', message: 'timed out after 50 ms' })
  t.notOk(fineCalls[0]!.signal.aborted, 'a call that answered in time is never aborted')
  t.match((await app.orders.deadLetters('stuck')).items, [{ event: { id: created!.id }, attempts: 2, error: 'timed out after 50 ms' }])
  t.same([stuck.id, fine.id], [created!.order.id, other!.order.id])
})

t.test('a handler that never answers is retried forever with backoff, shown failing with its timeout', async t => {
  const app = await buildApp(t)
  let calls = 0
  app.orders.subscribe('stuck', () => { calls++; return new Promise(() => {}) }, { from: 'start', ...quick, timeout: 20, maxBackoff: 5 })
  await app.orders.create(orderBody())
  await eventually('several attempts', () => calls >= 3)
  t.match(app.orders.subscriptions()[0], { lastEventId: null, failing: { attempts: Number, error: 'timed out after 20 ms' } })
})

t.test('app.close() waits for a handler that never answers at most its timeout, aborts it and returns', async t => {
  const app = await registeredApp(t, memoryStorage())
  let signal: AbortSignal | undefined
  app.orders.subscribe('stuck', (_event, context) => { signal = context.signal; return new Promise(() => {}) }, { from: 'start', ...quick, timeout: 300 })
  await app.ready()
  await app.orders.create(orderBody())
  await eventually('the handler is called', () => signal !== undefined)
  await app.close()
  t.ok(signal!.aborted, 'closed, with the call aborted')
  t.match(signal!.reason, { code: 'ORDER_HANDLER_TIMEOUT' })
})
