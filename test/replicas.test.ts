// Pages from a real hot standby: each caller reads its own writes, tokens across instances, cursors, and replicas that fall behind, fail or belong elsewhere.
import Fastify, { type FastifyInstance } from 'fastify'
import type pg from 'pg'
import t, { type Test } from 'tap'
import { orderPlugin } from '../lib/index.js'
import { postgresStorage } from '../lib/storage/postgres/postgres-storage.js'
import { orderBody, post } from './helper.js'
import { missingServer, startCluster, type Cluster } from './replica-cluster.js'

const missing = await missingServer()
if (missing !== undefined) {
  t.test('reads from replicas on a real primary and standby', { skip: `needs PostgreSQL's server programs: ${missing}` }, () => {})
} else {
  await replicaTests(await startCluster('500ms'))
}

/** Counts the pages a pool's server served (the storage's page statements read the view's position). */
function countPages (pool: pg.Pool): { pages: number } {
  const counter = { pages: 0 }
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>
  ;(pool as unknown as { query: unknown }).query = (text: unknown, ...rest: unknown[]) => {
    if (typeof text === 'string' && text.includes('fastify_order_at')) counter.pages++
    return query(text, ...rest)
  }
  return counter
}

/** Waits until `check` holds, polling; fails the test after `limit` ms. */
async function until (t: Test, what: string, check: () => boolean | Promise<boolean>, limit = 20_000): Promise<void> {
  const end = Date.now() + limit
  while (!(await check())) {
    if (Date.now() > end) {
      t.fail(`${what}: not within ${limit} ms`)
      return
    }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function replicaTests (cluster: Cluster): Promise<void> {
  t.teardown(() => cluster.stop())
  const primary = cluster.pool('primary', 8)
  const standby = cluster.pool('standby', 8)
  const replicaPages = countPages(standby)
  let tables = 0

  /** An app on the primary with the standby as its replica; the customer-id header scopes each request. */
  async function appOf (t: Test, options: { replicas?: pg.Pool[], maxReplicaLag?: number, table?: string } = {}): Promise<FastifyInstance> {
    const storage = postgresStorage({ client: primary, replicas: options.replicas ?? [standby], table: options.table ?? `replicas_${tables++}`, ...(options.maxReplicaLag === undefined ? {} : { maxReplicaLag: options.maxReplicaLag }) })
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(orderPlugin, {
      storage,
      authorize: request => {
        const customerId = request.headers['customer-id']
        return typeof customerId === 'string' ? { customerId } : true
      }
    })
    await app.ready()
    return app
  }

  const inUse = (app: FastifyInstance) => app.orders.replicas().every(replica => replica.inUse)

  t.test('a caller reads its own write at once, from the primary while the standby lags; other callers keep reading the standby', async t => {
    const app = await appOf(t)
    t.same(app.orders.replicas().map(({ name }) => name), [`127.0.0.1:${cluster.ports.standby}`], 'named by host:port')
    await until(t, 'the standby in use', () => inUse(app))
    // The table itself must have reached the standby before a page can be read there.
    await until(t, 'the layout replayed', async () => (await standby.query('SELECT to_regclass($1) AS found', [`replicas_${tables - 1}`])).rows[0].found !== null)
    const created = await post(app, 'createOrder', orderBody({ customerId: 'cus_a' }), { 'customer-id': 'cus_a' })
    t.equal(created.status, 201)
    t.match(created.headers['order-consistency'], /^\d+-[0-9A-F]+\/[0-9A-F]+$/, 'the write hands its token')
    t.ok(String(created.headers['order-consistency']).length <= 64)

    let before = replicaPages.pages
    const own = await post(app, 'getOrderList', {}, { 'customer-id': 'cus_a' })
    t.same(own.body.items.map((order: { id: string }) => order.id), [created.body.id], 'its own order is on its page')
    t.equal(replicaPages.pages, before, 'read from the primary: the standby has not replayed the write yet')

    before = replicaPages.pages
    const other = await post(app, 'getOrderList', {}, { 'customer-id': 'cus_b' })
    t.equal(other.status, 200)
    t.equal(replicaPages.pages, before + 1, 'another caller reads the standby meanwhile')

    // Once the standby has replayed the write, the caller's pages come from it, with the order.
    await until(t, 'the caller back on the standby', async () => {
      before = replicaPages.pages
      const page = await post(app, 'getOrderList', {}, { 'customer-id': 'cus_a' })
      t.same(page.body.items.map((order: { id: string }) => order.id), [created.body.id], 'every page has the order')
      return replicaPages.pages === before + 1
    })

    // A move, a no-op and a replay hand tokens too.
    const moved = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' }, { 'customer-id': 'cus_a' })
    t.match(moved.headers['order-consistency'], /^\d+-/)
    const same = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'paid' }, { 'customer-id': 'cus_a' })
    t.match(same.headers['order-consistency'], /^\d+-/, 'a no-op')
    const page = await post(app, 'getOrderList', {}, { 'customer-id': 'cus_a' })
    t.equal(page.body.items[0].status, 'paid', 'the page after the move has it')
    const refused = await post(app, 'updateOrderStatus', { id: created.body.id, status: 'pending' }, { 'customer-id': 'cus_a' })
    t.equal(refused.status, 409)
    t.equal(refused.headers['order-consistency'], undefined, 'no token on a refusal')
  })

  t.test('across instances the token brings the write along; a malformed one is 400, one of another database reads the primary', async t => {
    const table = `replicas_${tables++}`
    const writer = await appOf(t, { table })
    const reader = await appOf(t, { table })
    await until(t, 'the standby in use', () => inUse(writer) && inUse(reader))
    await until(t, 'the layout replayed', async () => (await standby.query('SELECT to_regclass($1) AS found', [table])).rows[0].found !== null)
    const key = { 'customer-id': 'cus_x', 'idempotency-key': 'k-1' }
    const created = await post(writer, 'createOrder', orderBody({ customerId: 'cus_x' }), key)
    const token = created.headers['order-consistency'] as string
    const replayed = await post(writer, 'createOrder', orderBody({ customerId: 'cus_x' }), key)
    t.equal(replayed.headers['idempotent-replayed'], 'true')
    t.match(replayed.headers['order-consistency'], /^\d+-/, 'a replay hands a token')

    const withToken = await post(reader, 'getOrderList', {}, { 'customer-id': 'cus_x', 'order-consistency': token })
    t.same(withToken.body.items.map((order: { id: string }) => order.id), [created.body.id], 'the other instance includes the write')

    const bad = await post(reader, 'getOrderList', {}, { 'order-consistency': 'not a token' })
    t.equal(bad.status, 400)
    t.equal(bad.body.code, 'ORDER_INVALID_CONSISTENCY')

    const before = replicaPages.pages
    const foreign = await post(reader, 'getOrderList', {}, { 'customer-id': 'cus_x', 'order-consistency': `1-${token.split('-')[1]!}` })
    t.equal(foreign.status, 200, 'a token of another database is no error')
    t.equal(replicaPages.pages, before, 'its page comes from the primary')
    t.same(foreign.body.items.map((order: { id: string }) => order.id), [created.body.id])

    // app.orders: the token handed to onConsistency, taken by list; primary: true.
    let handed: string | undefined
    const order = await writer.orders.create(orderBody({ customerId: 'cus_y' }), { onConsistency: token => { handed = token } })
    t.type(handed, 'string')
    const listed = await reader.orders.list({ filter: { customerId: 'cus_y' } }, { consistency: handed! })
    t.same(listed.items.map(({ id }) => id), [order.id])
    const fromPrimary = replicaPages.pages
    t.same((await reader.orders.list({ filter: { customerId: 'cus_y' } }, { primary: true })).items.map(({ id }) => id), [order.id])
    t.equal(replicaPages.pages, fromPrimary, 'primary: true reads the primary')
    await t.rejects(reader.orders.list({}, { consistency: 'x' }), { code: 'ORDER_INVALID_CONSISTENCY' })
  })

  t.test('a cursor carries its view: the next page never comes from a replica behind it', async t => {
    const table = `replicas_${tables++}`
    const writer = await appOf(t, { table })
    const reader = await appOf(t, { table })
    await until(t, 'the layout replayed', async () => (await standby.query('SELECT to_regclass($1) AS found', [table])).rows[0].found !== null)
    await until(t, 'the standby in use', () => inUse(reader))
    let token = ''
    for (let i = 0; i < 3; i++) token = (await post(writer, 'createOrder', orderBody({ customerId: 'cus_c' }))).headers['order-consistency'] as string
    const first = await post(reader, 'getOrderList', { limit: 2, order: 'asc' }, { 'order-consistency': token })
    t.equal(first.body.items.length, 2)
    t.match(first.body.nextCursor, /^2\./, 'the cursor names its view')
    // Without the token, the reader would take the standby; the cursor alone keeps it on the primary.
    const before = replicaPages.pages
    const second = await post(reader, 'getOrderList', { limit: 2, order: 'asc', cursor: first.body.nextCursor })
    t.equal(second.body.items.length, 1, 'the third order, which the standby has not replayed yet')
    t.equal(replicaPages.pages, before, 'from the primary')
  })

  t.test('a replica of another cluster, or a server not in recovery, is left out and says why', async t => {
    const app = await appOf(t, { replicas: [cluster.pool('other'), cluster.pool('primary')] })
    await until(t, 'both sampled', () => app.orders.replicas().every(replica => replica.error !== 'not sampled yet'))
    const [other, notStandby] = app.orders.replicas()
    t.match(other, { name: `127.0.0.1:${cluster.ports.other}`, inUse: false, error: /not a standby of this primary/ })
    t.match(notStandby, { name: `127.0.0.1:${cluster.ports.primary}`, inUse: false, error: /not in recovery/ })
    t.equal((await post(app, 'getOrderList', {})).status, 200, 'pages come from the primary')
  })

  t.test('replay paused past maxReplicaLag: pages leave the standby, and return once it resumes', async t => {
    const app = await appOf(t, { maxReplicaLag: 1000 })
    await until(t, 'the layout replayed', async () => (await standby.query('SELECT to_regclass($1) AS found', [`replicas_${tables - 1}`])).rows[0].found !== null)
    await until(t, 'the standby in use', () => inUse(app))
    await standby.query('SELECT pg_wal_replay_pause()')
    t.teardown(() => standby.query('SELECT pg_wal_replay_resume()'))
    const writing = { on: true }
    const writes = (async () => {
      while (writing.on) {
        await app.orders.create(orderBody({ customerId: 'cus_w' }))
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    })()
    await until(t, 'the standby left out', () => !inUse(app))
    t.ok(app.orders.replicas()[0]!.lagMs > 1000, 'its lag is above maxReplicaLag')
    let before = replicaPages.pages
    t.equal((await post(app, 'getOrderList', {}, { 'customer-id': 'cus_other' })).status, 200)
    t.equal(replicaPages.pages, before, 'pages go to the primary')
    await standby.query('SELECT pg_wal_replay_resume()')
    await until(t, 'the standby back in use', () => inUse(app))
    before = replicaPages.pages
    await post(app, 'getOrderList', {}, { 'customer-id': 'cus_other' })
    t.equal(replicaPages.pages, before + 1, 'pages come from it again')
    writing.on = false
    await writes
  })

  // Last: the standby is killed.
  t.test('the standby killed under load: no page fails', async t => {
    const app = await appOf(t)
    await until(t, 'the layout replayed', async () => (await standby.query('SELECT to_regclass($1) AS found', [`replicas_${tables - 1}`])).rows[0].found !== null)
    await until(t, 'the standby in use', () => inUse(app))
    const statuses: number[] = []
    const reading = { on: true }
    const readers = Array.from({ length: 4 }, async (_, i) => {
      while (reading.on) statuses.push((await post(app, 'getOrderList', {}, { 'customer-id': `cus_${i}` })).status)
    })
    await until(t, 'pages under way', () => statuses.length > 20)
    await cluster.killStandby()
    await until(t, 'the standby left out', () => app.orders.replicas()[0]!.error !== undefined)
    const after = statuses.length
    await until(t, 'pages after the kill', () => statuses.length > after + 20)
    reading.on = false
    await Promise.all(readers)
    t.same([...new Set(statuses)], [200], 'every page answered')
    t.match(app.orders.replicas()[0], { inUse: false, error: /./ })
  })
}
