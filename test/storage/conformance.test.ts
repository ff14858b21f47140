// The storage conformance suite: memoryStorage passes every case, and the runner reports what fails.
import { randomUUID } from 'node:crypto'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { deliveryCases } from '../../lib/storage/conformance/delivery-cases.js'
import { conformanceCases, runConformance, runConformanceCase } from '../../lib/storage/conformance/run-conformance.js'
import { memoryStorage, type Order, type OrderItem, type OrderStorage } from '../../lib/index.js'

type MemoryStorage = ReturnType<typeof memoryStorage>

// Every case of a capability memoryStorage has, each a test of its own; it cannot join a transaction.
for (const conformanceCase of conformanceCases.filter(({ capability }) => capability !== 'transactions')) {
  t.test(`memoryStorage: ${conformanceCase.name}`, async t => {
    t.equal(await runConformanceCase(conformanceCase, memoryStorage), undefined, 'passed, not skipped')
  })
}

/** The names of the cases an AggregateError from runConformance reports as failed. */
async function failedCases (run: Promise<unknown>): Promise<string[]> {
  try {
    await run
  } catch (err) {
    if (!(err instanceof AggregateError)) throw err
    return conformanceCases
      .map(({ name }) => name)
      .filter(name => err.errors.some((failure: Error) => failure.message.startsWith(`${name}: `)))
  }
  return []
}

/** memoryStorage with one method swapped for a broken one. */
function brokenStorage (broken: (storage: MemoryStorage) => Partial<OrderStorage>): () => OrderStorage {
  return () => {
    const storage = memoryStorage()
    return { ...storage, ...broken(storage) }
  }
}

/** A replace that ignores expectedVersion: the last writer wins. */
function lastWriteWins (storage: MemoryStorage): Partial<OrderStorage> {
  return {
    async replace (order, _expectedVersion, event) {
      for (;;) {
        const stored = await storage.get(order.id)
        if (stored === undefined) return false
        if (await storage.replace(order, stored.version, event)) return true
      }
    }
  }
}

t.test('runConformance resolves for memoryStorage, sync or async factory', async t => {
  await t.resolves(runConformance(memoryStorage))
  await t.resolves(runConformance(async () => memoryStorage()))
})

t.test('runConformance awaits init before every case, each on a fresh storage', async t => {
  const storages = new Set<OrderStorage>()
  let initialized = 0
  const report = await runConformance(() => {
    const storage: OrderStorage = { ...memoryStorage(), init: async () => { initialized++ } }
    storages.add(storage)
    return storage
  })
  t.equal(storages.size, conformanceCases.length, 'a fresh storage for every case')
  t.equal(initialized, report.passed.length, 'initialized before every case that ran')
})

t.test('runConformance reports the cases a storage cannot run as skipped, with why, never as passed', async t => {
  const transactionCases = conformanceCases.filter(({ capability }) => capability === 'transactions').map(({ name }) => name)
  const report = await runConformance(memoryStorage)
  t.same(report.skipped.map(({ name }) => name), transactionCases, 'memoryStorage cannot join a transaction')
  t.match(report.skipped[0]!.reason, /no joinTransaction/)
  t.notOk(report.passed.some(name => transactionCases.includes(name)), 'none of them reported as passed')
  t.equal(report.passed.length + report.skipped.length, conformanceCases.length)
})

t.test('a storage with only the orders capability runs the orders cases and reports the rest skipped', async t => {
  const ordersOnly = () => {
    const { create, get, list, replace, purgeIdempotencyKeys } = memoryStorage()
    return { create, get, list, replace, purgeIdempotencyKeys }
  }
  const report = await runConformance(ordersOnly)
  t.same(new Set(report.skipped.map(({ name }) => conformanceCases.find(c => c.name === name)!.capability)), new Set(['feed', 'subscriptions', 'transactions', 'changes']))
  t.ok(report.passed.includes('the orders methods exist'))
  t.ok(report.passed.length > 20)
})

t.test('a storage with changes but without the feed passes the changes cases on what it has', async t => {
  const changesOnly = () => {
    const { create, get, list, replace, purgeIdempotencyKeys, readChangeClaim } = memoryStorage()
    return { create, get, list, replace, purgeIdempotencyKeys, readChangeClaim }
  }
  const report = await runConformance(changesOnly)
  const changeCases = conformanceCases.filter(({ capability }) => capability === 'changes').map(({ name }) => name)
  t.same(changeCases.filter(name => report.passed.includes(name)), changeCases)
})

t.test('a storage whose list always throws fails every case that lists', async t => {
  // The cases that call list at all, found by running each on a memoryStorage that counts its calls.
  const listing: string[] = []
  for (const conformanceCase of conformanceCases) {
    let calls = 0
    await runConformanceCase(conformanceCase, brokenStorage(storage => ({ list: async query => { calls++; return storage.list(query) } })))
    if (calls > 0) listing.push(conformanceCase.name)
  }
  const failed = await failedCases(runConformance(brokenStorage(() => ({ list: async () => { throw new Error('list is down') } }))))
  t.same(failed, listing, 'every case that lists fails, and no other')
  t.ok(failed.includes('an id that is not a string is never coerced into one'), 'even the case that lets a list refuse a number')
  t.ok(failed.includes('create chooses each order\'s number: positive, unique, growing with each create, kept by get, list and replays'),
    'the numbers case says list keeps them, so it lists')
  t.ok(failed.includes('list walks all orders by (createdAt, id) in both orders'))
})

t.test('a replace that ignores expectedVersion (and the claim of a change) fails the compare-and-set cases', async t => {
  const failed = await failedCases(runConformance(brokenStorage(lastWriteWins)))
  t.same(failed, [
    'replace with a stale expected version changes nothing',
    'parallel replaces from one version: exactly one wins',
    'a change that stores nothing stores no event',
    'replace with a change claim stores the claim with the order; a second change with the live key stores nothing',
    'a change claim is stored only with its change: a stale version stores neither',
    'parallel changes with one key from one version: exactly one stores its order and claim',
    'an expired change claim is not returned, frees its key, and is purged with the create claims'
  ])
})

t.test('a create that ignores the claim fails the idempotency cases', async t => {
  const failed = await failedCases(runConformance(brokenStorage(storage => ({
    create: async (order, event) => storage.create(order, event)
  }))))
  t.same(failed, [
    'a claimed idempotency key returns the first order and its fingerprint',
    'parallel creates with one idempotency key store exactly one order',
    'an expired idempotency claim frees its key',
    'purgeIdempotencyKeys deletes expired keys a bounded batch at a time, and no live one',
    'create chooses each order\'s number: positive, unique, growing with each create, kept by get, list and replays',
    'a reference is unique per customer: a second create stores nothing, not even its claim',
    'a change that stores nothing stores no event',
    'an expired change claim is not returned, frees its key, and is purged with the create claims'
  ])
})

t.test('a create that drops the reference, or numbers every order 1, fails the cases of numbers and references', async t => {
  const dropped = await failedCases(runConformance(brokenStorage(storage => ({
    create: async ({ reference: _, ...order }, event, claim) => storage.create(order, { ...event, order }, claim)
  })), { skipCapabilities: ['feed', 'subscriptions'] }))
  t.same(dropped, [
    'a reference is unique per customer: a second create stores nothing, not even its claim',
    'concurrent creates with one customer\'s reference store exactly one order',
    'list by reference walks every customer\'s orders with it, or one customer\'s, in page order',
    'a reference is unique per customer within a store; orders without a store count as one more store'
  ])
  const ones = await failedCases(runConformance(brokenStorage(storage => ({
    create: async (order, event, claim) => {
      const result = await storage.create(order, event, claim)
      return result.created ? { created: true, order: { ...result.order, number: 1 } } : result
    }
  })), { skipCapabilities: ['feed', 'subscriptions'] }))
  t.ok(ones.includes('create chooses each order\'s number: positive, unique, growing with each create, kept by get, list and replays'), ones.join('; '))
})

t.test('a list that ignores after is reported, not looped on forever', async t => {
  const failed = await failedCases(runConformance(brokenStorage(storage => ({
    list: async ({ after, ...query }) => storage.list(query)
  }))))
  t.same(failed, [
    'list walks all orders by (createdAt, id) in both orders',
    'list applies every filter, alone and combined',
    'list starts strictly after the given position',
    'a walk visits each order once while orders are created',
    'list reflects status changes made by replace',
    'list by reference walks every customer\'s orders with it, or one customer\'s, in page order',
    'list by store walks one store\'s orders, alone and with every other filter',
    'list by balance (due, settled, owed), alone and with other filters, walks exactly the matching orders in both orders'
  ])
})

t.test('a storage that ignores stores, or keeps references unique per customer across stores, fails the store cases', async t => {
  const unfiltered = await failedCases(runConformance(brokenStorage(storage => ({
    list: async ({ store: _, ...query }) => storage.list(query)
  })), { skipCapabilities: ['feed', 'subscriptions'] }))
  t.same(unfiltered, [
    'an order\'s store and who made each change round-trip through create, get, list and replace',
    'list by store walks one store\'s orders, alone and with every other filter',
    'a reference is unique per customer within a store; orders without a store count as one more store'
  ])
  const acrossStores = await failedCases(runConformance(brokenStorage(storage => ({
    create: async (order, event, claim) => {
      // (Creates with a claim, whose replays answer first, are left to the storage.)
      const taken = order.reference !== undefined && claim === undefined && (await storage.list({ reference: order.reference, customerId: order.customerId, order: 'asc', limit: 1 })).length > 0
      return taken ? { created: false, referenceTaken: true } : storage.create(order, event, claim)
    }
  })), { skipCapabilities: ['feed', 'subscriptions'] }))
  t.same(acrossStores, ['a reference is unique per customer within a store; orders without a store count as one more store'])
  const withoutBy = await failedCases(runConformance(brokenStorage(storage => ({
    get: async (id) => {
      const order = await storage.get(id)
      return order && { ...order, statusHistory: order.statusHistory.map(({ by: _, ...change }) => change) }
    }
  })), { skipCapabilities: ['feed', 'subscriptions'] }))
  t.same(withoutBy, ['an order\'s store and who made each change round-trip through create, get, list and replace'])
})

t.test('a list that ties createdAt by another id order fails the ordering cases', async t => {
  const failed = await failedCases(runConformance(brokenStorage(storage => ({
    // Case-insensitive id order, as many database collations sort.
    list: async (query) => {
      const page = await storage.list({ ...query, after: undefined, limit: 1000 })
      const sign = query.order === 'asc' ? 1 : -1
      return page
        .sort((a, b) => sign * (a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id, 'en')))
        .filter(order => query.after === undefined ||
          sign * (order.createdAt.localeCompare(query.after.createdAt) || order.id.localeCompare(query.after.id, 'en')) > 0)
        .slice(0, query.limit)
    }
  }))))
  t.ok(failed.includes('list walks all orders by (createdAt, id) in both orders'))
  t.ok(failed.includes('list applies every filter, alone and combined'))
})

// Each broken feed or subscription store fails the case that names what it breaks.
const brokenFeeds: Array<[string, (storage: MemoryStorage) => Partial<OrderStorage>, string]> = [
  ['stores the change when its event cannot be stored', storage => ({
    create: async (order, event, claim) => storage.create(order, event, claim)
      .catch(() => storage.create(order, { ...event, id: randomUUID() }, claim))
  }), 'a change whose event cannot be stored is not stored either'],
  ['lists each page backwards', storage => ({
    listEvents: async (query) => (await storage.listEvents(query))?.reverse()
  }), 'every stored change is listed with its event, in feed order'],
  ['lists the event named by after again', storage => ({
    listEvents: async (query) => {
      const page = await storage.listEvents(query)
      const all = await storage.listEvents({ limit: 100_000 })
      const named = all?.find(event => event.id === query.after)
      return named === undefined || page === undefined ? page : [named, ...page].slice(0, query.limit)
    }
  }), 'a reader passing the last id sees every event once while parallel writers store'],
  ['answers an unknown after with an empty page', storage => ({
    listEvents: async (query) => (await storage.listEvents(query)) ?? []
  }), 'listEvents after an id that is not in the feed lists undefined'],
  ['purges what a live subscription has not handled', storage => ({
    purgeEvents: async (_before, limit) => storage.purgeEvents('9999-12-31T23:59:59.999Z', limit)
  }), 'purgeEvents keeps what a live subscription has not handled'],
  ['starts every subscription at the start', storage => ({
    lease: async (request) => storage.lease({ ...request, from: 'start' })
  }), 'a subscription from start reads from the oldest event, one from now only what comes later'],
  ['lets any holder checkpoint', storage => {
    const holders = new Map<string, string>()
    return {
      lease: async (request) => {
        const lease = await storage.lease(request)
        if (lease.held) holders.set(request.name, request.holder)
        return lease
      },
      checkpoint: async (name, _holder, lastEventId, eventId) => storage.checkpoint(name, holders.get(name) ?? '', lastEventId, eventId)
    }
  }, 'checkpoint is a compare-and-set on the holder and the last event'],
  ['never lets a lease lapse', storage => ({
    lease: async (request) => storage.lease({ ...request, ttl: 3_600_000 })
  }), 'a lease is held by one holder until it lapses or is released']
]

for (const [what, broken, expected] of brokenFeeds) {
  t.test(`an adapter that ${what} fails "${expected}"`, async t => {
    const failed = await failedCases(runConformance(brokenStorage(broken)))
    t.ok(failed.includes(expected), failed.join('; '))
  })
}

// Each broken delivery store fails the case that names what it breaks; only those cases run.
const deliveryCaseNames = new Set(deliveryCases.map(({ name }) => name))
const brokenDeliveries: Array<[string, (storage: MemoryStorage) => Partial<OrderStorage>, string]> = [
  ['forgets the events finished above the checkpoint', storage => ({
    recordOutcomes: async (name, holder, outcomes) => storage.recordOutcomes(name, holder, { ...outcomes, finished: [] })
  }), 'readSubscription continues after an event it read, and never lists one recorded as finished'],
  ['purges dead letters with the feed', storage => {
    let purged = false
    return {
      purgeEvents: async (before, limit) => { const count = await storage.purgeEvents(before, limit); purged ||= count > 0; return count },
      listDeadLetters: async (name, query) => purged ? [] : storage.listDeadLetters(name, query)
    }
  }, 'dead letters keep a copy of their event, list in feed order and outlive retention'],
  ['keeps redelivering what was delivered', storage => ({
    recordOutcomes: async (name, holder, outcomes) => storage.recordOutcomes(name, holder, { ...outcomes, delivered: [] })
  }), 'redeliver puts dead letters back until they are delivered; one that fails again is updated'],
  ['counts the lag without a limit', storage => ({
    inspectSubscription: async (name) => storage.inspectSubscription(name, 100_000)
  }), 'inspectSubscription counts what the subscription has not finished, up to a limit, and its dead letters']
]

for (const [what, broken, expected] of brokenDeliveries) {
  t.test(`an adapter that ${what} fails "${expected}"`, async t => {
    const skip = conformanceCases.map(({ name }) => name).filter(name => !deliveryCaseNames.has(name))
    const failed = await failedCases(runConformance(brokenStorage(broken), { skip }))
    t.ok(failed.includes(expected), failed.join('; '))
  })
}

t.test('an adapter missing a method fails the case of its capability first', async t => {
  const without = (method: keyof OrderStorage) => () => ({ ...memoryStorage(), [method]: undefined }) as unknown as OrderStorage
  t.equal((await failedCases(runConformance(without('get'))))[0], 'the orders methods exist')
  t.equal((await failedCases(runConformance(without('purgeIdempotencyKeys'))))[0], 'the orders methods exist', 'an adapter written before key purging')
  t.equal((await failedCases(runConformance(without('purgeEvents'))))[0], 'the feed methods exist')
  t.equal((await failedCases(runConformance(without('release'))))[0], 'the subscriptions methods exist')
})

t.test('a list may refuse an id that is not a string, or find nothing, but never coerce it', async t => {
  const coercing = brokenStorage(storage => ({
    list: async (query) => storage.list({ ...query, customerId: query.customerId === undefined ? undefined : String(query.customerId), ids: query.ids?.map(String) })
  }))
  t.same(await failedCases(runConformance(coercing)), ['an id that is not a string is never coerced into one'])
  const findingNothing = brokenStorage(storage => ({
    list: async (query) => [query.customerId, ...query.ids ?? []].some(id => id !== undefined && typeof id !== 'string') ? [] : storage.list(query)
  }))
  t.same(await failedCases(runConformance(findingNothing)), [])
  const refusingOtherwise = brokenStorage(storage => ({
    list: async (query) => { if (typeof query.customerId === 'number') throw new RangeError('a number'); return storage.list(query) }
  }))
  t.same(await failedCases(runConformance(refusingOtherwise)), ['an id that is not a string is never coerced into one'])
})

t.test('a storage whose get loses data fails the round-trip case', async t => {
  const failed = await failedCases(runConformance(brokenStorage(storage => ({
    get: async (id) => {
      const order = await storage.get(id)
      // A JSON column read back by assignment loses "__proto__" keys.
      return order === undefined ? undefined : { ...order, metadata: Object.assign({}, order.metadata) }
    }
  }))))
  t.ok(failed.includes('get returns the created order unchanged'))
})

t.test('a storage that keeps only the item fields it knows fails the custom-field case', async t => {
  const withoutItemFields = (order: Order): Order =>
    ({ ...order, items: order.items.map(({ customFields, ...item }: OrderItem & { customFields?: unknown }) => item) })
  const failed = await failedCases(runConformance(brokenStorage(storage => ({
    get: async (id) => { const order = await storage.get(id); return order && withoutItemFields(order) },
    list: async (query) => (await storage.list(query)).map(withoutItemFields)
  }))))
  t.same(failed, ['custom fields round-trip exactly through create, get, list and replace'])
})

t.test('a factory that throws fails every case, whatever it throws', async t => {
  const failed = await failedCases(runConformance(() => { throw 'no database' })) // eslint-disable-line no-throw-literal
  t.equal(failed.length, conformanceCases.length)
  await t.rejects(runConformance(() => { throw 'no database' }), { // eslint-disable-line no-throw-literal
    errors: conformanceCases.map(({ name }) => ({ message: `${name}: no database`, cause: 'no database' }))
  })
})

t.test('an adapter that reports a claim still in progress conforms', async t => {
  await t.resolves(runConformance(() => {
    const storage = memoryStorage()
    const claiming = new Set<string>()
    return {
      ...storage,
      async create (order, event, claim) {
        if (claim === undefined) return storage.create(order, event)
        if (claiming.has(claim.key)) return { created: false, inProgress: true }
        claiming.add(claim.key)
        try {
          await nextTurn()
          return await storage.create(order, event, claim)
        } finally {
          claiming.delete(claim.key)
        }
      }
    }
  }))
})

t.test('runConformance skips the cases named in skip', async t => {
  const skip = [
    'replace with a stale expected version changes nothing',
    'parallel replaces from one version: exactly one wins',
    'a change that stores nothing stores no event',
    'replace with a change claim stores the claim with the order; a second change with the live key stores nothing',
    'a change claim is stored only with its change: a stale version stores neither',
    'parallel changes with one key from one version: exactly one stores its order and claim',
    'an expired change claim is not returned, frees its key, and is purged with the create claims'
  ]
  let factoryCalls = 0
  const broken = brokenStorage(lastWriteWins)
  await t.resolves(runConformance(() => { factoryCalls++; return broken() }, { skip }))
  t.equal(factoryCalls, conformanceCases.length - skip.length)
})

t.test('runConformance skips whole capabilities', async t => {
  // An adapter whose subscriptions do not work yet: the orders and feed cases still hold it to them.
  const noSubscriptions = brokenStorage(() => ({ lease: async () => { throw new Error('not yet') } }))
  t.ok((await failedCases(runConformance(noSubscriptions))).length > 0, 'without skipping, its subscription cases fail')
  const ran: string[] = []
  await t.resolves(runConformance(() => { ran.push('case'); return noSubscriptions() }, { skipCapabilities: ['subscriptions'] }))
  t.equal(ran.length, conformanceCases.filter(({ capability }) => capability !== 'subscriptions').length)
  await t.rejects(runConformance(memoryStorage, { skipCapabilities: ['leases' as never] }),
    { name: 'TypeError', message: /no capability is named "leases"; capabilities are orders, feed, subscriptions/ })
})

t.test('runConformance rejects a skip name that is not a case', async t => {
  let factoryCalls = 0
  await t.rejects(runConformance(() => { factoryCalls++; return memoryStorage() }, { skip: ['the orders methods exists'] }), TypeError)
  t.equal(factoryCalls, 0, 'nothing runs')
})
