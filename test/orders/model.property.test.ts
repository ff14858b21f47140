// Model-based properties: random sequences (and concurrent bursts) of requests agree with a simple model.
import assert from 'node:assert/strict'
import { setImmediate as nextTick } from 'node:timers/promises'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import orderPlugin, {
  defaultWorkflow, memoryStorage, type CreateOrderInput, type ListOrdersFilter, type Order, type OrderStorage
} from '../../lib/index.js'
import { CUSTOMERS, STORES, allowed, createBodyArb, sameRequest, statusArb } from './order-arbitraries.js'

interface Model {
  /** Every order as the server last returned it, in creation order. */
  orders: Order[]
  /** Idempotency keys sent so far, with the body that claimed each and the order it made. */
  keys: Map<string, { body: CreateOrderInput, id: string }>
}

interface Real {
  app: FastifyInstance
}

async function post (app: FastifyInstance, operation: string, payload: unknown, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'POST', url: `/order/${operation}`, payload: payload as object, headers })
  return { status: response.statusCode, body: response.json(), headers: response.headers }
}

function assertError (response: { status: number, body: { statusCode: number, code: string } }, status: number, code: string): void {
  assert.equal(response.status, status, JSON.stringify(response.body))
  assert.equal(response.body.code, code)
  assert.equal(response.body.statusCode, status)
}

function replaceInModel (model: Model, order: Order): void {
  model.orders = model.orders.map(known => known.id === order.id ? order : known)
}

/** (createdAt, id) ascending, the order pages follow. */
function compare (a: Order, b: Order): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

type KeyPlan =
  | { kind: 'none' }
  | { kind: 'new', key: string }
  | { kind: 'reuse', pick: number, sameBody: boolean }

class CreateOrder implements fc.AsyncCommand<Model, Real> {
  constructor (readonly body: CreateOrderInput, readonly keyPlan: KeyPlan) {}

  check (model: Readonly<Model>): boolean {
    return this.keyPlan.kind !== 'reuse' || model.keys.size > 0
  }

  async run (model: Model, { app }: Real): Promise<void> {
    let key: string | undefined
    let body = this.body
    if (this.keyPlan.kind === 'new') key = this.keyPlan.key
    if (this.keyPlan.kind === 'reuse') {
      key = [...model.keys.keys()][this.keyPlan.pick % model.keys.size]!
      const first = model.keys.get(key)!.body
      body = this.keyPlan.sameBody ? first : { ...body, customerId: `${first.customerId}_other` }
    }
    const response = await post(app, 'createOrder', body, key === undefined ? {} : { 'idempotency-key': key })
    const claimed = key === undefined ? undefined : model.keys.get(key)
    if (claimed !== undefined && !sameRequest(claimed.body, body)) {
      assertError(response, 422, 'ORDER_IDEMPOTENCY_KEY_REUSED')
      return
    }
    assert.equal(response.status, 201, JSON.stringify(response.body))
    if (claimed !== undefined) {
      assert.equal(response.headers['idempotent-replayed'], 'true')
      assert.deepEqual(response.body, model.orders.find(order => order.id === claimed.id), 'a replay returns the order as it is now')
      return
    }
    assert.equal(response.headers['idempotent-replayed'], undefined)
    const order: Order = response.body
    assert.deepEqual(order, {
      id: order.id,
      // Numbered in creation order; a replay makes no order and takes no number.
      number: model.orders.length + 1,
      customerId: body.customerId,
      status: defaultWorkflow.initial,
      currency: body.currency,
      items: body.items,
      total: body.items.reduce((sum, item) => sum + item.quantity * item.unitPrice, 0),
      metadata: body.metadata ?? {},
      ...body.store !== undefined && { store: body.store },
      version: 1,
      statusHistory: [{ status: defaultWorkflow.initial, at: order.createdAt }],
      createdAt: order.createdAt,
      updatedAt: order.createdAt
    })
    assert.equal(new Date(order.createdAt).toISOString(), order.createdAt)
    assert.ok(!model.orders.some(known => known.id === order.id), 'ids are unique')
    model.orders.push(order)
    if (key !== undefined) model.keys.set(key, { body, id: order.id })
  }

  toString (): string {
    return `CreateOrder(${JSON.stringify(this.body)}, ${JSON.stringify(this.keyPlan)})`
  }
}

type VersionPlan = 'none' | 'right' | 'ahead' | 'behind'

class UpdateStatus implements fc.AsyncCommand<Model, Real> {
  constructor (readonly pick: number, readonly status: string, readonly versionPlan: VersionPlan, readonly reason: string | undefined) {}

  check (): boolean {
    return true
  }

  async run (model: Model, { app }: Real): Promise<void> {
    const reason = this.reason === undefined ? {} : { reason: this.reason }
    if (model.orders.length === 0) {
      const response = await post(app, 'updateOrderStatus', { id: `ord_unknown_${this.pick}`, status: this.status, ...reason })
      assertError(response, 404, 'ORDER_NOT_FOUND')
      return
    }
    const current = model.orders[this.pick % model.orders.length]!
    const expectedVersion = {
      none: undefined,
      right: current.version,
      ahead: current.version + 1 + (this.pick % 3),
      behind: current.version - 1
    }[this.versionPlan]
    const response = await post(app, 'updateOrderStatus', {
      id: current.id, status: this.status, ...reason, ...(expectedVersion === undefined ? {} : { expectedVersion })
    })
    if (expectedVersion === 0) {
      assert.equal(response.status, 400, 'expectedVersion starts at 1')
      return
    }
    if (expectedVersion !== undefined && expectedVersion !== current.version) {
      assertError(response, 409, 'ORDER_VERSION_CONFLICT')
      return
    }
    if (this.status === current.status) {
      assert.equal(response.status, 200)
      assert.deepEqual(response.body, current, 'a move to the current status is a no-op')
      return
    }
    if (!allowed(current.status, this.status)) {
      assertError(response, 409, 'ORDER_INVALID_TRANSITION')
      return
    }
    assert.equal(response.status, 200, JSON.stringify(response.body))
    const order: Order = response.body
    const at = order.updatedAt
    assert.ok(at >= current.updatedAt, 'updatedAt never goes back')
    assert.deepEqual(order, {
      ...current,
      status: this.status,
      version: current.version + 1,
      statusHistory: [...current.statusHistory, { status: this.status, at, ...reason }],
      updatedAt: at
    })
    replaceInModel(model, order)
  }

  toString (): string {
    return `UpdateStatus(${this.pick}, ${this.status}, ${this.versionPlan}, ${JSON.stringify(this.reason)})`
  }
}

interface FilterPlan {
  customerId?: string
  store?: string
  status?: string | string[]
  ids?: { picks: number[], unknown: boolean }
  createdFrom?: { pick: number, shift: number }
  createdTo?: { pick: number, shift: number }
}

class ListPage implements fc.AsyncCommand<Model, Real> {
  constructor (readonly plan: FilterPlan, readonly order: 'asc' | 'desc' | undefined, readonly limit: number) {}

  check (): boolean {
    return true
  }

  /** A date filter near a stored createdAt (or a fixed date when there is none), so ties are tested. */
  dateOf (model: Model, { pick, shift }: { pick: number, shift: number }): string {
    const base = model.orders.length === 0 ? Date.parse('2026-01-01T00:00:00.000Z') : Date.parse(model.orders[pick % model.orders.length]!.createdAt)
    return new Date(base + shift).toISOString()
  }

  async run (model: Model, { app }: Real): Promise<void> {
    const { plan } = this
    const filter: ListOrdersFilter = {}
    if (plan.customerId !== undefined) filter.customerId = plan.customerId
    if (plan.store !== undefined) filter.store = plan.store
    if (plan.status !== undefined) filter.status = plan.status
    if (plan.ids !== undefined) {
      filter.ids = plan.ids.picks.map(pick => model.orders.length === 0 ? `ord_${pick}` : model.orders[pick % model.orders.length]!.id)
      if (plan.ids.unknown) filter.ids.push('ord_unknown')
    }
    if (plan.createdFrom !== undefined) filter.createdFrom = this.dateOf(model, plan.createdFrom)
    if (plan.createdTo !== undefined) filter.createdTo = this.dateOf(model, plan.createdTo)

    const statuses = typeof filter.status === 'string' ? [filter.status] : filter.status
    const sign = this.order === 'asc' ? 1 : -1
    const expected = model.orders
      .filter(order =>
        (filter.customerId === undefined || order.customerId === filter.customerId) &&
        (filter.store === undefined || order.store === filter.store) &&
        (statuses === undefined || statuses.includes(order.status)) &&
        (filter.ids === undefined || filter.ids.includes(order.id)) &&
        (filter.createdFrom === undefined || order.createdAt >= filter.createdFrom) &&
        (filter.createdTo === undefined || order.createdAt < filter.createdTo))
      .sort((a, b) => sign * compare(a, b))

    const request = { filter, limit: this.limit, ...(this.order === undefined ? {} : { order: this.order }) }
    const seen: Order[] = []
    let cursor: string | undefined
    for (let pages = 0; ; pages++) {
      assert.ok(pages <= expected.length + 1, 'the walk ends')
      const response = await post(app, 'getOrderList', cursor === undefined ? request : { ...request, cursor })
      assert.equal(response.status, 200, JSON.stringify(response.body))
      const { items, nextCursor } = response.body as { items: Order[], nextCursor: string | null }
      assert.ok(items.length <= this.limit)
      assert.ok(cursor === undefined || items.length > 0, 'a cursor never leads to an empty page')
      seen.push(...items)
      if (nextCursor === null) break
      cursor = nextCursor
    }
    assert.deepEqual(seen, expected, `walk of ${JSON.stringify(request)}`)
  }

  toString (): string {
    return `ListPage(${JSON.stringify(this.plan)}, ${this.order}, ${this.limit})`
  }
}

const keyArb = fc.stringMatching(/^[\x21-\x7E]{1,12}$/)

const commandArbs = [
  fc.tuple(createBodyArb, fc.oneof(
    fc.constant<KeyPlan>({ kind: 'none' }),
    keyArb.map((key): KeyPlan => ({ kind: 'new', key })),
    fc.record({ kind: fc.constant('reuse' as const), pick: fc.nat(), sameBody: fc.boolean() })
  )).map(([body, keyPlan]) => new CreateOrder(body, keyPlan)),
  fc.tuple(
    fc.nat(),
    statusArb,
    fc.constantFrom<VersionPlan>('none', 'none', 'right', 'ahead', 'behind'),
    fc.option(fc.string({ maxLength: 20 }), { nil: undefined })
  ).map(([pick, status, versionPlan, reason]) => new UpdateStatus(pick, status, versionPlan, reason)),
  fc.tuple(
    fc.record({
      customerId: fc.constantFrom(...CUSTOMERS, 'cus_none'),
      store: fc.constantFrom(...STORES, 'none'),
      status: fc.oneof(statusArb, fc.uniqueArray(statusArb, { minLength: 1, maxLength: 3 })),
      ids: fc.record({ picks: fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), unknown: fc.boolean() }),
      createdFrom: fc.record({ pick: fc.nat(), shift: fc.integer({ min: -1, max: 1 }) }),
      createdTo: fc.record({ pick: fc.nat(), shift: fc.integer({ min: -1, max: 1 }) })
    }, { requiredKeys: [] }),
    fc.constantFrom(undefined, 'asc' as const, 'desc' as const),
    fc.integer({ min: 1, max: 4 })
  ).map(([plan, order, limit]) => new ListPage(plan, order, limit))
]

/**
 * One app for every run of a property, on a storage that each run replaces with its own, empty one: a run
 * starts from nothing stored, as on a new app, and what the app keeps between requests must not tell the
 * runs apart either. Building an app (its validators, its routes) costs several times what a run does.
 */
async function orderApp (t: Test): Promise<{ app: FastifyInstance, use: (storage: OrderStorage) => void }> {
  let current: OrderStorage = memoryStorage()
  // Each method the plugin takes from it calls the current storage's, whenever it was taken.
  const storage = Object.fromEntries(Object.keys(current).map(name => [name,
    (...args: unknown[]) => (current as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!(...args)
  ])) as unknown as OrderStorage
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage })
  await app.ready()
  return { app, use: next => { current = next } }
}

t.test('any sequence of creates, status updates and list walks agrees with the model', async t => {
  const { app, use } = await orderApp(t)
  await fc.assert(fc.asyncProperty(fc.commands(commandArbs, { maxCommands: 25 }), async (commands) => {
    use(memoryStorage())
    await fc.asyncModelRun(() => ({ model: { orders: [], keys: new Map() }, real: { app } }), commands)
  }), { seed: 20260101, numRuns: 80 })
})

/** memoryStorage (`stored`) seen through `storage`, whose calls start and answer in an order the scheduler picks once gated. */
function scheduledStorage (s: fc.Scheduler): { storage: OrderStorage, stored: OrderStorage, gate: () => void } {
  const storage = memoryStorage()
  let gated = false
  const scheduled = <A extends unknown[], R>(label: string, method: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (!gated) return method(...args)
      await s.schedule(Promise.resolve(), `${label} starts`)
      const result = await method(...args)
      return s.schedule(Promise.resolve(result), `${label} answers`)
    }
  return {
    storage: {
      ...storage,
      create: scheduled('create', storage.create),
      get: scheduled('get', storage.get),
      list: scheduled('list', storage.list),
      replace: scheduled('replace', storage.replace)
    },
    stored: storage,
    gate: () => { gated = true }
  }
}

type Request =
  | { kind: 'update', pick: number, status: string, expectedVersion: number | undefined }
  | { kind: 'create', key: string, body: number }

const requestArb: fc.Arbitrary<Request> = fc.oneof(
  fc.record({
    kind: fc.constant('update' as const),
    // Mostly one order, mostly along the workflow's main path: races are then on moves that are allowed.
    pick: fc.constantFrom(0, 0, 0, 1),
    status: fc.constantFrom('paid', 'paid', 'paid', 'shipped', 'shipped', 'delivered', 'refunded', 'cancelled', 'pending'),
    expectedVersion: fc.oneof(
      { weight: 2, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }
    )
  }),
  fc.record({ kind: fc.constant('create' as const), key: fc.constantFrom('key-1', 'key-2'), body: fc.nat({ max: 1 }) })
)

t.test('concurrent updates and idempotent creates keep every order consistent', async t => {
  const bodies = [
    { customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] },
    { customerId: 'cus_2', currency: 'EUR', items: [{ sku: 'B-2', quantity: 2, unitPrice: 200 }] }
  ]
  const { app, use } = await orderApp(t)
  await fc.assert(fc.asyncProperty(fc.scheduler(), fc.array(requestArb, { minLength: 2, maxLength: 10 }), async (s, requests) => {
    const { storage, stored, gate } = scheduledStorage(s)
    use(storage)
    const seeded = [await app.orders.create(bodies[0]!), await app.orders.create(bodies[1]!)]
    gate()
    const sent = Promise.all(requests.map(request => request.kind === 'update'
      ? post(app, 'updateOrderStatus', {
        id: seeded[request.pick]!.id,
        status: request.status,
        ...(request.expectedVersion === undefined ? {} : { expectedVersion: request.expectedVersion })
      })
      : post(app, 'createOrder', bodies[request.body], { 'idempotency-key': request.key })))
    // Requests reach the storage on later ticks: hold every one at its first storage call, then interleave.
    for (let ticks = 0; s.count() < requests.length; ticks++) {
      assert.ok(ticks < 1000, 'every request reaches the storage')
      await nextTick()
    }
    const responses = await s.waitFor(sent)

    const orders = await stored.list({ order: 'asc', limit: 100 })
    for (const order of orders) {
      assert.equal(order.version, order.statusHistory.length, 'version === statusHistory.length')
      assert.equal(order.statusHistory[0]!.status, defaultWorkflow.initial)
      assert.equal(order.statusHistory.at(-1)!.status, order.status)
      for (let i = 1; i < order.statusHistory.length; i++) {
        const [from, to] = [order.statusHistory[i - 1]!, order.statusHistory[i]!]
        assert.ok(allowed(from.status, to.status), `${from.status} -> ${to.status} is an allowed move`)
        assert.ok(from.at <= to.at, 'history is in time order')
      }
    }
    const byId = new Map(orders.map(order => [order.id, order]))
    const madeByKey = new Map<string, Set<string>>()
    requests.forEach((request, i) => {
      const { status, body } = responses[i]!
      const answer = status < 300 ? status : `${status} ${body.code}`
      const allowedAnswers = request.kind === 'create'
        ? [201, '409 ORDER_IDEMPOTENCY_IN_PROGRESS', '422 ORDER_IDEMPOTENCY_KEY_REUSED']
        // Without expectedVersion a lost race is retried: only the workflow may refuse the move.
        : request.expectedVersion === undefined
          ? [200, '409 ORDER_INVALID_TRANSITION']
          : [200, '409 ORDER_INVALID_TRANSITION', '409 ORDER_VERSION_CONFLICT']
      assert.ok(allowedAnswers.includes(answer), `${request.kind} answered ${answer}: ${JSON.stringify(body)}`)
      if (request.kind === 'create' && status === 201) {
        madeByKey.set(request.key, (madeByKey.get(request.key) ?? new Set()).add(body.id))
      }
      if (request.kind === 'update' && status === 200) {
        // An acknowledged move is never lost: it is in the history at the version it answered with.
        assert.equal(byId.get(body.id)!.statusHistory[body.version - 1]!.status, body.status)
      }
    })
    for (const ids of madeByKey.values()) assert.equal(ids.size, 1, 'each idempotency key made exactly one order')
    const keysUsed = new Set(requests.flatMap(request => request.kind === 'create' ? [request.key] : []))
    assert.equal(orders.length, seeded.length + keysUsed.size, 'no order beyond one per key')
  }), { seed: 20260102, numRuns: 100 })
})
