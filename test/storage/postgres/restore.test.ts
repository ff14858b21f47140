// A database copied into another cluster, where transaction ids start elsewhere, keeps its feed: every
// restored event listed once, in its order, before every new one; every subscription resumes after its checkpoint.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import Fastify from 'fastify'
import pg from 'pg'
import t, { type Test } from 'tap'
import orderPlugin, { type Order, type OrderEvent } from '../../../lib/index.js'
import { postgresSchemaSql, postgresStorage, type PostgresClient } from '../../../lib/storage/postgres/postgres-storage.js'
import { eventually, orderBody } from '../../helper.js'
import { freshPGlite, testDatabase } from '../../postgres-helper.js'
import { changed } from '../change-storage.js'

const db = await testDatabase(t)
const quick = { pollInterval: 20, leaseTtl: 200 }
const TABLE = 'shop_orders'

/** Uses up `count` transaction ids, so the cluster that writes first is ahead of the one it is copied into. */
async function burnTransactionIds (client: PostgresClient, count: number): Promise<void> {
  await client.query('CREATE OR REPLACE PROCEDURE pg_temp.burn (n int) LANGUAGE plpgsql AS $$ BEGIN FOR i IN 1..n LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$', [])
  await client.query(`CALL pg_temp.burn(${count})`, [])
}

interface History {
  /** Every event, in feed order. */
  events: OrderEvent[]
  /** What each subscription is owed after its checkpoint, in feed order. */
  owed: Record<string, string[]>
  /** The order a change after placement left owing, under the claim of the key `change:restore`. */
  changed: Order
}

/** An app's history: orders, moves, one subscription checkpointed part way and one started from now. */
async function writeHistory (t: Test, client: PostgresClient): Promise<History> {
  const storage = postgresStorage({ client, table: TABLE })
  const app = Fastify()
  await app.register(orderPlugin, { storage })
  await app.ready()
  const orders: Array<{ id: string }> = []
  for (let i = 0; i < 12; i++) {
    orders.push(await app.orders.create(orderBody({ customerId: `cus_${i % 3}` }), { idempotencyKey: `key-${i}` }))
    if (i === 5) {
      await storage.lease({ name: 'late', holder: 'writer', ttl: 60_000, from: 'now' })
      await storage.release('late', 'writer')
    }
  }
  for (const order of orders.slice(0, 4)) await app.orders.updateStatus({ id: order.id, status: 'paid' })
  // A change after placement, with its claim: a payment above the total leaves the order owed.
  const placed = (await storage.get(orders[4]!.id))!
  const change = changed(placed, { paid: placed.total + 500, balance: -500 })
  t.ok(await storage.replace(change.after, placed.version, change.event, { key: 'change:restore', fingerprint: 'f', expiresAt: '2100-01-01T00:00:00.000Z' }))
  const events: OrderEvent[] = []
  await eventually('the feed lists all 17 events', async () => {
    events.push(...(await app.orders.listEvents({ after: events.at(-1)?.id })).items)
    return events.length === 17
  })
  await storage.lease({ name: 'erp', holder: 'writer', ttl: 60_000, from: 'start' })
  t.ok(await storage.checkpoint('erp', 'writer', null, events[9]!.id))
  await storage.release('erp', 'writer')
  await app.close()
  return {
    events,
    owed: {
      erp: events.slice(10).map(event => event.id),
      // Started after the sixth create.
      late: events.slice(6).map(event => event.id)
    },
    changed: change.after
  }
}

/** Starts the app on the copy, writes a little, and checks the feed and both subscriptions. */
async function assertCopyResumes (t: Test, client: PostgresClient, history: History): Promise<void> {
  const app = Fastify()
  t.teardown(() => app.close())
  const storage = postgresStorage({ client, table: TABLE })
  await app.register(orderPlugin, { storage })
  await app.ready()
  t.same(await storage.readChangeClaim('change:restore', history.changed.updatedAt), { fingerprint: 'f', order: history.changed }, 'a change\'s claim came along with its answer')
  t.same((await storage.list({ balance: 'owed', order: 'asc', limit: 10 })).map(order => order.id), [history.changed.id], 'and the balance signs')
  const received: Record<string, string[]> = { erp: [], late: [] }
  for (const name of ['erp', 'late']) app.orders.subscribe(name, async event => { received[name]!.push(event.id) }, quick)

  const restored: OrderEvent[] = (await app.orders.listEvents({ limit: 1000 })).items
  t.same(restored.map(event => event.id), history.events.map(event => event.id), 'every restored event, listed at once, in its order')
  const created = [await app.orders.create(orderBody({ customerId: 'cus_new' })), await app.orders.create(orderBody({ customerId: 'cus_new' }))]
  await app.orders.updateStatus({ id: created[0]!.id, status: 'paid' })
  const fresh: OrderEvent[] = []
  await eventually('the new events are listed', async () => {
    fresh.push(...(await app.orders.listEvents({ after: fresh.at(-1)?.id ?? history.events.at(-1)!.id })).items)
    return fresh.length === 3
  })
  t.same(fresh.map(event => [event.type, event.order.id]), [['created', created[0]!.id], ['created', created[1]!.id], ['statusChanged', created[0]!.id]],
    'new events come after every restored one, in the order they were made')
  t.same((await app.orders.listEvents({ limit: 1000 })).items.map(event => event.id), [...history.events, ...fresh].map(event => event.id), 'one feed, nothing twice')
  await eventually('both subscriptions catch up', () => received.erp!.length >= history.owed.erp!.length + 3 && received.late!.length >= history.owed.late!.length + 3)
  t.same(received.erp, [...history.owed.erp!, ...fresh.map(event => event.id)], '"erp" resumes exactly after its checkpoint')
  t.same(received.late, [...history.owed.late!, ...fresh.map(event => event.id)], '"late", started from now, gets exactly what came after its start')
  // Idempotency keys came along: a retry of a create made before the move replays it.
  const replay = await app.orders.create(orderBody({ customerId: 'cus_0' }), { idempotencyKey: 'key-0' })
  t.equal(replay.id, history.events[0]!.order.id)
}

/** A logical copy of the storage's tables, row by row, as logical replication or pg_dump --inserts makes one. */
async function copyTables (source: PostgresClient, target: PostgresClient): Promise<void> {
  for (const statement of postgresSchemaSql({ table: TABLE }).flatMap(step => step.statements)) await target.query(statement, [])
  const copy = async (table: string, columns: string[], types: string[], overriding = '') => {
    const { rows } = await source.query(`SELECT ${columns.map(column => `${column}::text AS ${column}`).join(', ')} FROM "${table}"`, [])
    for (const row of rows) {
      await target.query(`INSERT INTO "${table}" (${columns.join(', ')}) ${overriding} VALUES (${types.map((type, i) => `$${i + 1}::text::${type}`).join(', ')})`,
        columns.map(column => row[column]))
    }
  }
  await copy(TABLE, ['id', 'customer_id', 'status', 'created_at', 'version', 'document', 'balance_sign'], ['text', 'text', 'text', 'text', 'bigint', 'json', 'smallint'])
  await copy(`${TABLE}_idempotency_keys`, ['key', 'fingerprint', 'order_id', 'expires_at', 'answer'], ['text', 'json', 'text', 'text', 'json'])
  await copy(`${TABLE}_events`, ['id', 'aggregatetype', 'aggregateid', 'type', 'payload', 'at', 'tx', 'seq', 'epoch'],
    ['uuid', 'text', 'text', 'text', 'json', 'text', 'xid8', 'bigint', 'int'], 'OVERRIDING SYSTEM VALUE')
  await copy(`${TABLE}_subscriptions`, ['name', 'holder', 'lease_expires_at', 'held_at', 'tx', 'seq', 'last_event_id', 'start_snapshot', 'epoch'],
    ['text', 'text', 'timestamptz', 'timestamptz', 'xid8', 'bigint', 'uuid', 'pg_snapshot', 'int'])
  await target.query(`DELETE FROM "${TABLE}_schema"`, [])
  await copy(`${TABLE}_schema`, ['version', 'epoch'], ['int', 'int'])
  const [{ seq }] = (await source.query(`SELECT max(seq) AS seq FROM "${TABLE}_events"`, [])).rows
  await target.query(`SELECT setval(pg_get_serial_sequence('"${TABLE}_events"', 'seq'), $1::bigint)`, [seq])
}

/** A database of its own on the server, so a dump holds this storage and nothing of the tests running beside it. */
async function serverDatabase (t: Test): Promise<{ client: pg.Client, url: string }> {
  const name = `fo_restore_${randomBytes(4).toString('hex')}`
  await db.client.query(`CREATE DATABASE ${name}`, [])
  const url = new URL(process.env.DATABASE_URL!)
  url.pathname = `/${name}`
  const client = new pg.Client({ connectionString: url.href })
  await client.connect()
  t.teardown(async () => {
    await client.end()
    await db.client.query(`DROP DATABASE ${name}`, [])
  })
  return { client, url: url.href }
}

t.test(`a copy of ${db.server ? 'a server (pg_dump)' : 'a PGlite (row by row)'} into a younger PGlite lists every event once, in order, and resumes every subscription`, async t => {
  const target = await freshPGlite()
  t.teardown(() => target.close())
  if (db.server) {
    const { client, url } = await serverDatabase(t)
    await burnTransactionIds(client, 5000)
    const history = await writeHistory(t, client)
    const { stdout } = await promisify(execFile)('pg_dump', ['--inserts', '--no-owner', '--no-privileges', url], { maxBuffer: 64 * 1024 * 1024 })
    // A dump of PostgreSQL 15.14 or later opens with \restrict, a psql command: PGlite runs SQL only.
    await target.exec(`${stdout.split('\n').filter(line => !/^\\(un)?restrict /.test(line)).join('\n')}\nRESET ALL;`)
    await assertCopyResumes(t, target, history)
  } else {
    const source = await freshPGlite()
    t.teardown(() => source.close())
    await burnTransactionIds(source, 5000)
    const history = await writeHistory(t, source)
    await copyTables(source, target)
    await assertCopyResumes(t, target, history)
  }
  t.same((await target.query(`SELECT epoch FROM "${TABLE}_schema"`)).rows, [{ epoch: 2 }], 'the copy started a new epoch')
})

t.test(`a PGlite copied into ${db.server ? 'the server' : 'another PGlite'}, an older cluster, keeps its feed too`, async t => {
  const source = await freshPGlite()
  t.teardown(() => source.close())
  const history = await writeHistory(t, source)
  let target: PostgresClient
  if (db.server) {
    target = (await serverDatabase(t)).client
  } else {
    const lite = await freshPGlite()
    t.teardown(() => lite.close())
    await burnTransactionIds(lite, 5000)
    target = lite
  }
  await copyTables(source, target)
  await assertCopyResumes(t, target, history)
  t.same((await target.query(`SELECT epoch FROM "${TABLE}_schema"`, [])).rows, [{ epoch: 1 }], 'positions the cluster could have issued: no new epoch')
})
