import pg from 'pg'
import t from 'tap'
import type { Order } from '../../../lib/index.js'
import { postgresStorage, type PostgresClient } from '../../../lib/storage/postgres/postgres-storage.js'
import type { StorageListQuery } from '../../../lib/storage/order-storage.js'
import { replaceOrder, storedOrder, storeOrder } from '../../helper.js'
import { planOf, testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

const claimOf = (key: string, fingerprint: string, expiresAt = '2026-01-02T10:00:00.000Z') => ({ key, fingerprint, expiresAt })

async function count (table: string): Promise<number> {
  const [row] = (await db.client.query(`SELECT count(*)::int AS n FROM "${table}"`, [])).rows
  return row.n
}

t.test('init creates the tables and indexes, and instances starting at once on one database are fine', async t => {
  const table = db.freshTable()
  const first = postgresStorage({ client: db.client, table })
  const second = postgresStorage({ client: db.connect(), table })
  await Promise.all([first.init!(), second.init!(), first.init!()])
  await second.init!()
  const { rows } = await db.client.query(
    'SELECT tablename, indexname FROM pg_indexes WHERE tablename IN ($1, $2, $3, $4, $5) ORDER BY indexname',
    [table, `${table}_idempotency_keys`, `${table}_events`, `${table}_subscriptions`, `${table}_schema`])
  t.same(rows.map(row => row.indexname), [
    `${table}_balance_created_idx`, `${table}_balance_status_created_idx`,
    `${table}_created_idx`, `${table}_customer_balance_created_idx`, `${table}_customer_balance_status_idx`, `${table}_customer_created_idx`, `${table}_customer_reference_store_idx`, `${table}_customer_status_created_idx`,
    `${table}_events_feed_idx`, `${table}_events_pkey`,
    `${table}_idempotency_keys_expires_idx`, `${table}_idempotency_keys_pkey`, `${table}_number_idx`, `${table}_pkey`,
    `${table}_reference_created_idx`, `${table}_schema_pkey`, `${table}_status_created_idx`,
    `${table}_store_balance_created_idx`, `${table}_store_balance_status_idx`,
    `${table}_store_created_idx`, `${table}_store_customer_bal_status_idx`, `${table}_store_customer_balance_idx`, `${table}_store_customer_created_idx`, `${table}_store_customer_status_idx`, `${table}_store_reference_created_idx`,
    `${table}_store_status_created_idx`,
    `${table}_subscriptions_pkey`
  ])
  const order = storedOrder()
  t.same(await storeOrder(first, order), { created: true, order })
  t.same(await second.get(order.id), order, 'both instances see one store')
})

t.test('an instance that starts while another is halfway through creating the tables waits for it', async t => {
  const table = db.freshTable()
  // The first instance pauses after creating the orders table, before the others: to a second one
  // that looked without waiting for the lock, that would be a table of another layout.
  let paused: () => void
  const halfway = new Promise<void>(resolve => { paused = resolve })
  let resume: () => void
  const resumed = new Promise<void>(resolve => { resume = resolve })
  const slow: PostgresClient = {
    async query (text, params) {
      const result = await db.client.query(text, params)
      if (text.startsWith(`CREATE TABLE IF NOT EXISTS "${table}" (`)) {
        paused()
        await resumed
      }
      return result
    }
  }
  const first = postgresStorage({ client: slow, table }).init!()
  await halfway
  const second = postgresStorage({ client: db.connect(), table }).init!()
  await new Promise(resolve => setTimeout(resolve, 300))
  resume!()
  await t.resolves(Promise.all([first, second]), 'both start, on one layout')
})

t.test('once its tables exist, the storage runs as a role that may only read and write their rows', async t => {
  const table = db.freshTable()
  await postgresStorage({ client: db.client, table }).init!()
  const role = `${table}_app`
  await db.client.query(`CREATE ROLE "${role}"`, [])
  await db.client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON "${table}", "${table}_idempotency_keys", "${table}_events", "${table}_subscriptions", "${table}_schema" TO "${role}"`, [])
  await db.client.query(`GRANT USAGE ON SEQUENCE "${table}_number_seq" TO "${role}"`, [])
  const session = await db.session()
  await session.query(`SET ROLE "${role}"`, [])
  t.teardown(async () => {
    await session.query('RESET ROLE', [])
    await db.client.query(`DROP OWNED BY "${role}"`, [])
    await db.client.query(`DROP ROLE "${role}"`, [])
  })

  const storage = postgresStorage({ client: session, table })
  await storage.init!()
  const order = storedOrder()
  t.same(await storeOrder(storage, order, claimOf('k', 'fp')), { created: true, order })
  t.equal(await replaceOrder(storage, { ...order, status: 'paid', version: 2 }, 1), true)
  t.same(await storage.list({ statuses: ['paid'], order: 'asc', limit: 5 }), [{ ...order, status: 'paid', version: 2 }])
  await t.rejects(postgresStorage({ client: session, table: db.freshTable() }).init!(), { code: '42501' },
    'the role could not have created them')
})

t.test('orders come back exactly as stored, whatever characters their strings hold', async t => {
  const storage = await db.storage()
  const customerId = 'cus "quoted" \\ \u0000 \ud800 é 🛒'
  const order = storedOrder({
    customerId,
    createdAt: '2026-03-04T05:06:07.008Z',
    updatedAt: '2026-03-04T05:06:07.008Z',
    items: [{ sku: 'A\u0000', name: 'Mug ☕ \udfff', quantity: 1_000_000, unitPrice: 1e12 }],
    total: Number.MAX_SAFE_INTEGER,
    metadata: JSON.parse('{"__proto__":"kept","z":"\\u0000","a":"first"}')
  })
  await storeOrder(storage, order)
  const stored = await storage.get(order.id)
  t.same(stored, order)
  t.equal(stored!.createdAt, '2026-03-04T05:06:07.008Z')
  t.ok(Object.hasOwn(stored!.metadata, '__proto__'), '__proto__ stays a metadata key')
  t.same(await storage.list({ customerId, order: 'desc', limit: 5 }), [order], 'the customer filter matches the exact string')
  t.same(await storage.list({ customerId: 'cus "quoted" \\ \\u0000 \ud800 é 🛒', order: 'desc', limit: 5 }), [], 'and only it')
  t.equal(await storage.get('no\u0000such'), undefined, 'an id the database could not hold is simply absent')
})

t.test('ids at the same instant are ordered as JavaScript compares strings', async t => {
  const storage = await db.storage()
  const ids = ['b', 'B', 'a', '_', '~', '0', 'é', 'a-1', 'a1', 'Z']
  for (const id of ids) await storeOrder(storage, storedOrder({ id }))
  const asc = (await storage.list({ order: 'asc', limit: 20 })).map(order => order.id)
  t.same(asc, [...ids].sort())
  const desc = (await storage.list({ order: 'desc', limit: 20 })).map(order => order.id)
  t.same(desc, [...ids].sort().reverse())
  const after = { createdAt: '2026-01-01T10:00:00.000Z', id: 'a' }
  t.same((await storage.list({ order: 'asc', after, limit: 3 })).map(order => order.id), ['a-1', 'a1', 'b'])
  t.same((await storage.list({ order: 'desc', after, limit: 3 })).map(order => order.id), ['_', 'Z', 'B'])
})

t.test('a create with a live idempotency key stores nothing and returns the first order and its fingerprint', async t => {
  const storage = await db.storage()
  const first = storedOrder()
  t.same(await storeOrder(storage, first, claimOf('k1', 'fp-1')), { created: true, order: first })
  const second = storedOrder({ createdAt: '2026-01-01T11:00:00.000Z' })
  t.same(await storeOrder(storage, second, claimOf('k1', 'fp-2')), { created: false, order: first, fingerprint: 'fp-1' })
  t.equal(await storage.get(second.id), undefined)
  t.same(await storeOrder(storage, second, claimOf('k2', 'fp-2')), { created: true, order: second }, 'another key is another claim')
})

t.test('a key is free again once it has expired', async t => {
  const storage = await db.storage()
  const first = storedOrder()
  await storeOrder(storage, first, claimOf('k', 'fp-1', '2026-01-01T10:00:01.000Z'))
  const atExpiry = storedOrder({ createdAt: '2026-01-01T10:00:01.000Z' })
  t.same(await storeOrder(storage, atExpiry, claimOf('k', 'fp-2', '2026-01-01T10:00:02.000Z')), { created: true, order: atExpiry })
  const replay = storedOrder({ createdAt: '2026-01-01T10:00:01.500Z' })
  t.same(await storeOrder(storage, replay, claimOf('k', 'fp-3')), { created: false, order: atExpiry, fingerprint: 'fp-2' })
})

t.test('expired keys are purged a bounded batch at a time, live keys stay', async t => {
  const table = db.freshTable()
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  const keys = `${table}_idempotency_keys`
  for (let i = 0; i < 15; i++) {
    await storeOrder(storage, storedOrder(), claimOf(`old-${i}`, 'fp', '2026-01-01T10:00:00.001Z'))
  }
  await storeOrder(storage, storedOrder({ createdAt: '2026-01-05T00:00:00.000Z' }), claimOf('new', 'fp', '2026-01-06T00:00:00.000Z'))
  t.equal(await count(keys), 16)
  t.equal(await storage.purgeIdempotencyKeys('2026-01-05T00:00:00.000Z', 10), 10, 'ten expired keys went')
  t.equal(await count(keys), 6)
  t.equal(await storage.purgeIdempotencyKeys('2026-01-05T00:00:00.000Z', 10), 5, 'the rest went')
  t.equal(await count(keys), 1, 'the live key stays')
  t.equal(await count(table), 16, 'orders are never purged')
})

t.test('a key whose order cannot be read answers "in progress"', async t => {
  const table = db.freshTable()
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  await storeOrder(storage, storedOrder(), claimOf('k', 'fp'))
  await db.client.query(`DELETE FROM "${table}"`, [])
  t.same(await storeOrder(storage, storedOrder(), claimOf('k', 'fp')), { created: false, inProgress: true })
  t.equal(await count(table), 0)
})

t.test('a create that fails stores neither the order nor its key', async t => {
  const table = db.freshTable()
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  const order = storedOrder()
  await storeOrder(storage, order)
  await t.rejects(storeOrder(storage, storedOrder({ id: order.id }), claimOf('k', 'fp')), 'the id is taken')
  t.equal(await count(`${table}_idempotency_keys`), 0)
  const retry = storedOrder()
  t.same(await storeOrder(storage, retry, claimOf('k', 'fp')), { created: true, order: retry }, 'the key is still free')
})

t.test('replace is a compare-and-set on the stored version', async t => {
  const storage = await db.storage()
  const order = storedOrder()
  await storeOrder(storage, order)
  const paid: Order = {
    ...order,
    status: 'paid',
    version: 2,
    statusHistory: [...order.statusHistory, { status: 'paid', at: '2026-01-01T10:05:00.000Z', reason: 'card' }],
    updatedAt: '2026-01-01T10:05:00.000Z'
  }
  t.equal(await replaceOrder(storage, paid, 2), false, 'a stale expected version changes nothing')
  t.same(await storage.get(order.id), order)
  t.equal(await replaceOrder(storage, paid, 1), true)
  t.same(await storage.get(order.id), paid)
  t.equal(await replaceOrder(storage, paid, 1), false, 'the same swap cannot happen twice')
  t.equal(await replaceOrder(storage, storedOrder({ id: 'missing' }), 1), false, 'an unknown id is not replaced')
  t.same(await storage.list({ statuses: ['paid'], order: 'desc', limit: 5 }), [paid], 'the status index follows')
  t.same(await storage.list({ statuses: ['pending'], order: 'desc', limit: 5 }), [])
})

t.test('the table option names the tables, so two stores share one database without meeting', async t => {
  const one = await db.storage()
  const other = await db.storage()
  const order = storedOrder()
  await storeOrder(one, order, claimOf('k', 'fp'))
  t.equal(await other.get(order.id), undefined)
  t.same(await other.list({ order: 'desc', limit: 5 }), [])
  const second = storedOrder()
  t.same(await storeOrder(other, second, claimOf('k', 'fp')), { created: true, order: second }, 'keys are per store too')
})

t.test('a table name that is not a plain identifier is refused when the storage is made', async t => {
  for (const table of ['', '1orders', 'shop-orders', 'orders"; DROP TABLE x; --', 'public.orders', 'a'.repeat(33)]) {
    t.throws(() => postgresStorage({ client: db.client, table }), { code: 'ORDER_INVALID_OPTIONS' }, JSON.stringify(table))
  }
  t.doesNotThrow(() => postgresStorage({ client: db.client, table: 'Shop_Orders_2026' }))
})

t.test('every documented filter, in both orders, is served from an index at 20 000 orders', async t => {
  const table = db.freshTable()
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  await db.client.query(`INSERT INTO "${table}" (id, customer_id, status, created_at, version, document)
    SELECT md5(i::text), 'cus_' || (i % 400), (ARRAY['pending','paid','shipped','delivered','cancelled','refunded'])[1 + i % 6],
      to_char(timestamp '2026-01-01' + i * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 1, '{}'
    FROM generate_series(1, 20000) AS i`, [])
  await db.client.query(`ANALYZE "${table}"`, [])

  const some = (await db.client.query(`SELECT id FROM "${table}" ORDER BY id LIMIT 50`, [])).rows.map(row => row.id)
  const filters: Record<string, Partial<StorageListQuery>> = {
    'no filter': {},
    customerId: { customerId: 'cus_7' },
    status: { statuses: ['paid'] },
    'two statuses': { statuses: ['paid', 'shipped'] },
    'customerId and status': { customerId: 'cus_7', statuses: ['paid'] },
    'customerId and three statuses': { customerId: 'cus_7', statuses: ['cancelled', 'paid', 'pending'] },
    ids: { ids: some },
    'ids, statuses and customerId': { ids: some, statuses: ['paid', 'shipped'], customerId: 'cus_7' },
    'created range': { createdFrom: '2026-01-03T00:00:00.000Z', createdTo: '2026-01-04T00:00:00.000Z' },
    'customerId, status and createdFrom': { customerId: 'cus_7', statuses: ['paid'], createdFrom: '2026-01-03T00:00:00.000Z' }
  }
  // Every read of the orders table is an index range: no sequential scan, and no row read then filtered
  // out (but for `ids`, where at most 100 orders are fetched by primary key and then filtered).
  const tableReads = (plan: any): string[] => [
    ...(plan['Relation Name'] === table ? [`${plan['Node Type']}${plan.Filter === undefined ? '' : ' with a filter'}`] : []),
    ...(plan.Plans ?? []).flatMap(tableReads)
  ]
  for (const [label, filter] of Object.entries(filters)) {
    for (const order of ['asc', 'desc'] as const) {
      for (const after of [undefined, { createdAt: '2026-01-08T00:00:00.000Z', id: 'm' }]) {
        const plan = await planOf(db.client, client => postgresStorage({ client, table }).list({ ...filter, order, after, limit: 21 }))
        const reads = tableReads(plan)
        const allowed = filter.ids === undefined ? ['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan'] : ['Index Scan', 'Index Scan with a filter', 'Bitmap Heap Scan', 'Bitmap Heap Scan with a filter']
        t.ok(reads.length > 0 && reads.every(read => allowed.includes(read)), `${label}, ${order}${after === undefined ? '' : ' after a cursor'}`, { reads })
      }
    }
  }
})

/** A client of the test database that records each call: its statement's name (none for text alone) and text. */
function recordingClient (calls: Array<{ name?: string, text: string }>, fail?: (name: string) => object | undefined): PostgresClient {
  return {
    query: async (config: any, params?: unknown[]) => {
      if (typeof config === 'string') {
        calls.push({ text: config })
        return db.client.query(config, params!)
      }
      calls.push({ name: config.name, text: config.text })
      const failure = fail?.(config.name)
      if (failure !== undefined) throw Object.assign(new Error('refused'), failure)
      return db.client.query(config.text, config.values)
    }
  }
}

t.test('with prepare, every statement but the DDL and the list pages is named after its text', async t => {
  const table = db.freshTable()
  const calls: Array<{ name?: string, text: string }> = []
  const client = recordingClient(calls)
  const storage = postgresStorage({ client, table, prepare: true })
  await storage.init!()
  t.ok(calls.length > 0 && calls.every(call => call.name === undefined), 'init runs its DDL unnamed')
  calls.length = 0
  const first = storedOrder()
  const second = storedOrder()
  await storeOrder(storage, first)
  await storeOrder(storage, second)
  await storage.get(first.id)
  await storage.list({ order: 'asc', limit: 5 })
  const [create1, create2, get, list] = calls
  t.match(create1!.name, /^fastify_order_[\da-f]{24}$/)
  t.equal(create2!.name, create1!.name, 'the same statement has the same name every time')
  t.not(get!.name, create1!.name, 'another statement, another name')
  t.equal(list!.name, undefined, 'list pages vary with the filter and stay unnamed')
  t.same(await storage.get(first.id), first)
  t.throws(() => postgresStorage({ client, prepare: 'yes' as never }), { code: 'ORDER_INVALID_OPTIONS', message: /^fastify-order: postgresStorage: prepare must be true or false, got "yes"$/ })
})

t.test('postgresStorage refuses options it cannot use, saying what to pass', async t => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['no options', undefined, /postgresStorage: options must be an object like \{ client: pool \}/],
    ['no client', {}, /postgresStorage: client must be a pg.Pool, a pg.Client or a PGlite/],
    ['a client without query', { client: { connect () {} } }, /client must be a pg.Pool/],
    ['an unknown option', { client: db.client, tabel: 'orders' }, /postgresStorage: unknown option "tabel"; the options are client, table, prepare/]
  ]
  for (const [what, options, message] of cases) {
    t.throws(() => postgresStorage(options as never), { code: 'ORDER_INVALID_OPTIONS', message }, what)
  }
})

t.test('a pg.Pool or pg.Client gets named statements with no option; prepare: false, PGlite and other clients do not', async t => {
  const table = db.freshTable()
  await postgresStorage({ client: db.client, table }).init!()
  const order = storedOrder()
  await storeOrder(postgresStorage({ client: db.client, table }), order)
  // pg's own classes, unconnected, their query recorded and run on the test database.
  const pool = new pg.Pool()
  const single = new pg.Client()
  const named = async (client: pg.Pool | pg.Client | PostgresClient, options: { prepare?: boolean } = {}) => {
    const calls: Array<{ name?: string, text: string }> = []
    Object.assign(client, { query: recordingClient(calls).query })
    t.same(await postgresStorage({ client: client as PostgresClient, table, ...options }).get(order.id), order)
    return calls[0]!.name !== undefined
  }
  t.equal(await named(pool), true, 'a pg.Pool')
  t.equal(await named(single), true, 'a pg.Client')
  t.equal(await named(pool, { prepare: false }), false, 'prepare: false')
  t.equal(await named({ query: db.client.query.bind(db.client) }), false, 'a client that only takes (text, params), as PGlite')
  t.equal(await named({ query: db.client.query.bind(db.client) }, { prepare: true }), true, 'unless prepare: true says it takes pg\'s')
})

for (const [code, what] of [['26000', 'does not exist'], ['42P05', 'already exists']]) {
  t.test(`a named statement a pooler lost ("${what}") is sent again unnamed, and so is every statement after it`, async t => {
    const table = db.freshTable()
    const calls: Array<{ name?: string, text: string }> = []
    let failures: object[] = []
    const client = recordingClient(calls, () => failures.shift())
    const storage = postgresStorage({ client, table, prepare: true })
    await storage.init!()
    const order = storedOrder()
    await storeOrder(storage, order)
    calls.length = 0
    failures = [{ code: '57P01' }, { code }]
    await t.rejects(storage.get(order.id), { code: '57P01' }, 'another error is the caller\'s, as it is')
    t.same(await storage.get(order.id), order, 'the call that met the lost statement succeeds')
    await storeOrder(storage, storedOrder())
    t.same(await storage.get(order.id), order)
    const [refused, lost, retried, ...later] = calls
    t.ok(refused!.name !== undefined && lost!.name === refused!.name, 'both failed calls were named')
    t.same(retried, { text: lost!.text }, 'the lost one, again, unnamed')
    t.ok(later.length === 2 && later.every(call => call.name === undefined), 'the rest unnamed, without another try', { later })
  })
}
