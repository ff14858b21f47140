// A MySQL storage copied with mysqldump into another database keeps its feed: every event listed once, in its order; every subscription resumes after its checkpoint.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import Fastify from 'fastify'
import mysql from 'mysql2/promise'
import t, { type Test } from 'tap'
import orderPlugin, { type Order, type OrderEvent } from '../../../lib/index.js'
import { MYSQL_SCHEMA_VERSION, mysqlStorage } from '../../../lib/storage/mysql/mysql-storage.js'
import type { StoredDeadLetter } from '../../../lib/storage/order-storage.js'
import { eventually, orderBody } from '../../helper.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'
import { changed } from '../change-storage.js'

const run = promisify(execFile)
const quick = { pollInterval: 20, leaseTtl: 200 }
// Each client run is bounded, so a server that stops answering fails the test instead of hanging it.
const CLIENT_TIMEOUT = 60_000

/** Whether the mysqldump and mysql clients are on this machine. */
async function haveClients (): Promise<boolean> {
  try {
    await run('which', ['mysqldump', 'mysql'])
    return true
  } catch {
    return false
  }
}

interface History {
  /** Every event the feed listed before the dump, in feed order. */
  events: OrderEvent[]
  /** Orders whose created events were written but never listed (not yet positioned) at dump time. */
  pending: string[]
  /** What each subscription is owed after its checkpoint, in feed order, of the listed events. */
  owed: Record<string, string[]>
  deadLetters: StoredDeadLetter[]
  /** The order a change after placement left owing, under the claim of the key `change:restore`. */
  changed: Order
}

/** An app's history: orders, moves, a subscription checkpointed part way with a dead letter, one started from now, and events never listed yet. */
async function writeHistory (t: Test, client: mysql.Pool, table: string): Promise<History> {
  const storage = mysqlStorage({ client, table })
  const app = Fastify()
  await app.register(orderPlugin, { storage })
  await app.ready()
  const orders: Array<{ id: string }> = []
  for (let i = 0; i < 10; i++) {
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
  await eventually('the feed lists all 15 events', async () => {
    events.push(...(await app.orders.listEvents({ after: events.at(-1)?.id })).items)
    return events.length === 15
  })
  // "erp" handled up to the eighth event, then the tenth, and set the eleventh aside.
  await storage.lease({ name: 'erp', holder: 'writer', ttl: 60_000, from: 'start' })
  t.ok(await storage.checkpoint('erp', 'writer', null, events[7]!.id), '"erp" checkpointed at the eighth event')
  const letter = { eventId: events[10]!.id, attempts: 3, error: 'the receiver answered HTTP 400', at: new Date().toISOString() }
  t.ok(await storage.recordOutcomes('erp', 'writer', { finished: [events[9]!.id, events[10]!.id], deadLetters: [letter], delivered: [] }), 'and finished two events above it')
  await storage.release('erp', 'writer')
  const deadLetters = (await storage.listDeadLetters('erp', { limit: 10 }))!
  t.same(deadLetters.map(dead => dead.event.id), [events[10]!.id], 'one dead letter before the dump')
  // Written, committed, and not read by anyone: they have no feed position yet when the dump is taken.
  const pending = [(await app.orders.create(orderBody({ customerId: 'cus_late' }))).id, (await app.orders.create(orderBody({ customerId: 'cus_late' }))).id]
  const [unlisted] = await client.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS count FROM \`${table}_events\` WHERE position IS NULL`)
  t.equal(Number(unlisted[0]!.count), 2, 'two events were never listed before the dump')
  await app.close()
  return {
    events,
    pending,
    owed: {
      erp: [events[8]!, ...events.slice(11)].map(event => event.id),
      // Started after the sixth create.
      late: events.slice(6).map(event => event.id)
    },
    deadLetters,
    changed: change.after
  }
}

/** The storage's tables (every one whose name starts with `table`) of the database of `source`, dumped with mysqldump and loaded into `target` with mysql. */
async function dumpAndLoad (t: Test, source: URL, target: string, table: string, tables: string[]): Promise<void> {
  const login = ['--host', source.hostname, '--port', source.port || '3306', '--user', decodeURIComponent(source.username) || 'root']
  if (source.password !== '') login.push(`--password=${decodeURIComponent(source.password)}`)
  const database = decodeURIComponent(source.pathname.slice(1))
  t.ok(tables.every(name => name.startsWith(table)) && tables.length === 8, 'the storage\'s eight tables are dumped')
  // Bytes, not text: binary columns (the idempotency keys' hashes) are written raw into the dump, and
  // decoding them as UTF-8 would replace every invalid sequence with U+FFFD.
  const { stdout: dump } = await run('mysqldump', [...login, '--single-transaction', database, ...tables],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: CLIENT_TIMEOUT })
  const load = run('mysql', [...login, target], { timeout: CLIENT_TIMEOUT })
  load.child.stdin!.end(dump)
  await load
}

/**
 * A fresh database on the server, dropped at teardown: "another server" for the copy. Its pool logs in
 * as a user of its own that may only read and write rows, as an app's often is: a storage that took
 * the copied layout for anything but current would try to create or upgrade it, and be refused.
 */
async function freshDatabase (t: Test, admin: mysql.Pool): Promise<{ name: string, client: mysql.Pool }> {
  const name = `fo_restore_${randomBytes(4).toString('hex')}`
  const password = randomBytes(12).toString('hex')
  await admin.query(`CREATE DATABASE \`${name}\``)
  await admin.query(`CREATE USER '${name}'@'%' IDENTIFIED BY '${password}'`)
  await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${name}\`.* TO '${name}'@'%'`)
  const url = new URL(mysqlUrl)
  url.pathname = `/${name}`
  url.username = name
  url.password = password
  const client = mysql.createPool({ uri: url.href, connectionLimit: 4 })
  t.teardown(async () => {
    await client.end()
    await admin.query(`DROP USER '${name}'@'%'`)
    await admin.query(`DROP DATABASE \`${name}\``)
  })
  return { name, client }
}

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
// A skipped test rather than plan(0): in test/adapter.mysql.ts this file's tests run among others.
else if (!await haveClients()) t.test('a storage copied with mysqldump', { skip: 'mysqldump or mysql is not installed: no client to copy a database with' }, async () => {})
else {
  const db = testMysql(t)

  t.test('a storage copied with mysqldump into another database lists every event once, in order, and resumes every subscription', async t => {
    const table = db.freshTable()
    const history = await writeHistory(t, db.client, table)
    const [rows] = await db.client.query<mysql.RowDataPacket[]>('SHOW TABLES LIKE ?', [`${table.replace(/_/g, '\\_')}%`])
    const target = await freshDatabase(t, db.client)
    await dumpAndLoad(t, new URL(mysqlUrl), target.name, table, rows.map(row => Object.values(row)[0] as string))

    const storage = mysqlStorage({ client: target.client, table })
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(orderPlugin, { storage })
    await app.ready()
    const [layout] = await target.client.query<mysql.RowDataPacket[]>(`SELECT version FROM \`${table}_schema\``)
    t.same(layout.map(row => row.version), [MYSQL_SCHEMA_VERSION], 'the copied layout is taken as it is (its app user may not run DDL): current, not upgraded or refused')
    t.same(await storage.readChangeClaim('change:restore', history.changed.updatedAt), { fingerprint: 'f', order: history.changed }, 'a change\'s claim came along with its answer')
    t.same((await storage.list({ balance: 'owed', order: 'asc', limit: 10 })).map(order => order.id), [history.changed.id], 'and the balance signs')

    const listed = (await app.orders.listEvents({ limit: 1000 })).items
    t.same(listed.slice(0, history.events.length).map(event => event.id), history.events.map(event => event.id), 'every event listed before the dump, in its order')
    const pending = listed.slice(history.events.length)
    t.same(pending.map(event => [event.type, event.order.id]), history.pending.map(id => ['created', id]), 'then the events never listed before the dump, in the order they were written')

    const received: Record<string, string[]> = { erp: [], late: [] }
    for (const name of ['erp', 'late']) app.orders.subscribe(name, async event => { received[name]!.push(event.id) }, quick)
    const created = [await app.orders.create(orderBody({ customerId: 'cus_new' })), await app.orders.create(orderBody({ customerId: 'cus_new' }))]
    await app.orders.updateStatus({ id: created[0]!.id, status: 'paid' })
    const fresh: OrderEvent[] = []
    await eventually('the new events are listed', async () => {
      fresh.push(...(await app.orders.listEvents({ after: fresh.at(-1)?.id ?? listed.at(-1)!.id })).items)
      return fresh.length >= 3
    })
    t.same(fresh.map(event => [event.type, event.order.id]), [['created', created[0]!.id], ['created', created[1]!.id], ['statusChanged', created[0]!.id]],
      'new events come after every copied one, in the order they were made')
    const all = [...listed, ...fresh].map(event => event.id)
    t.same((await app.orders.listEvents({ limit: 1000 })).items.map(event => event.id), all, 'one feed, nothing twice')
    t.equal(new Set(all).size, all.length, 'no event listed twice')

    const after = [...pending, ...fresh].map(event => event.id)
    await eventually('both subscriptions catch up', () => received.erp!.length >= history.owed.erp!.length + after.length &&
      received.late!.length >= history.owed.late!.length + after.length)
    // Let a few more polls pass: a copy that delivered anything twice would show it now.
    await new Promise(resolve => setTimeout(resolve, 5 * quick.pollInterval))
    t.same(received.erp, [...history.owed.erp!, ...after], '"erp" resumes exactly after its checkpoint, without the events it had finished or set aside')
    t.same(received.late, [...history.owed.late!, ...after], '"late", started from now, gets exactly what came after its start')
    t.same(await storage.listDeadLetters('erp', { limit: 10 }), history.deadLetters, 'the dead letter came along as it was')
    t.same(await app.orders.redeliver('erp'), { count: 1 }, 'the copied dead letter can be put back')
    await eventually('the copied dead letter is redelivered', () => received.erp!.length > history.owed.erp!.length + after.length)
    t.same(received.erp!.slice(history.owed.erp!.length + after.length), [history.deadLetters[0]!.event.id], 'put back, it is handled once')
    await eventually('the handled dead letter is removed', async () => (await storage.listDeadLetters('erp', { limit: 10 }))!.length === 0)
    t.pass('the handled dead letter is removed')

    // Idempotency keys came along: a retry of a create made before the copy replays it.
    const replay = await app.orders.create(orderBody({ customerId: 'cus_0' }), { idempotencyKey: 'key-0' })
    t.equal(replay.id, history.events[0]!.order.id, 'a retried create of before the copy replays its order')
  })
}
