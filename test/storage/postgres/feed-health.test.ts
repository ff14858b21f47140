// How long the PostgreSQL feed is held back: the transaction at its horizon, its age and its pid.
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import t from 'tap'
import { orderPlugin } from '../../../lib/index.js'
import { createdEvent } from '../../../lib/feed/events.js'
import { runnerOf, type PostgresClient } from '../../../lib/storage/postgres/client.js'
import { feedHealthOf } from '../../../lib/storage/postgres/sql/feed-health.js'
import { postgresStorage } from '../../../lib/storage/postgres/postgres-storage.js'
import { tablesOf } from '../../../lib/storage/postgres/tables.js'
import { eventually, logLines, storedOrder } from '../../helper.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)
const table = db.freshTable()
const storage = postgresStorage({ client: db.client, table })
await storage.init!()

/** The feed's health as `client` sees it, counting transactions of any age. */
const healthOn = (client: PostgresClient, youngest = 0) => feedHealthOf(tablesOf(table), runnerOf(client, false).query, youngest)
const health = healthOn(db.client)

/**
 * Reads the health until `done` holds. On a server, test files running at the same time may hold an
 * older transaction for a moment, and it is theirs the horizon names until it ends.
 */
async function until<T> (read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const found = await read()
    if (done(found) || attempt === 200) return found
    await sleep(50)
  }
}

/** A transaction that wrote (so took a transaction id) and stays open: a session of its own on a server, a prepared transaction on PGlite. */
async function openWriter (): Promise<{ pid: number | undefined, commit: () => Promise<void> }> {
  let pid: number | undefined
  const open = await db.openTransaction(async client => {
    await client.query('SELECT pg_current_xact_id()', [])
    if (db.server) pid = (await client.query('SELECT pg_backend_pid() AS pid', [])).rows[0].pid
  })
  return { pid, commit: open.commit }
}

t.test('a transaction left open after a write holds the feed back: its age from its start, and its backend\'s pid', async t => {
  const writer = await openWriter()
  const found = await until(health, found => found.pid === writer.pid && found.heldBackSeconds > 0)
  t.ok(found.heldBackSeconds > 0, `held back ${found.heldBackSeconds} s`)
  // On PGlite the transaction is a prepared one: no session runs it, so there is no pid to name.
  t.equal(found.pid, writer.pid, db.server ? 'the pid of the session left idle in transaction' : 'no pid for a prepared transaction')
  t.same(Object.keys(found).sort(), db.server ? ['heldBackSeconds', 'pid'] : ['heldBackSeconds'])
  await writer.commit()
  const after = await until(health, found => found.pid !== writer.pid || found.heldBackSeconds === 0)
  // On a server, test files running at the same time may hold the horizon in their turn.
  if (db.server) t.not(after.pid, writer.pid, 'once it commits it holds nothing')
  else t.same(after, { heldBackSeconds: 0 }, 'once it commits nothing holds the feed: 0 and no pid')
})

t.test('the session\'s own transaction is not one left open', async t => {
  const own = await db.session()
  await own.query('BEGIN', [])
  t.teardown(() => own.query('ROLLBACK', []))
  await own.query('SELECT pg_current_xact_id()', [])
  const { pid } = (await own.query('SELECT pg_backend_pid() AS pid', [])).rows[0]
  t.not((await healthOn(own)()).pid, pid)
})

t.test('a transaction younger than the storage\'s own statements take counts for nothing', async t => {
  const writer = await openWriter()
  t.teardown(writer.commit)
  t.same(await healthOn(db.client, 3600)(), { heldBackSeconds: 0 })
})

t.test('a session holding an old snapshot without a transaction id holds nothing back', { skip: !db.server && 'PGlite has one session' }, async t => {
  const reader = await db.session()
  const { pid } = (await reader.query('SELECT pg_backend_pid() AS pid', [])).rows[0]
  await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ', [])
  await reader.query(`SELECT count(*) FROM "${table}"`, [])
  t.teardown(() => reader.query('ROLLBACK', []))
  const event = createdEvent(storedOrder({ customerId: 'cus_after_snapshot' }))
  await storage.create(event.order, event)
  const found = await until(health, found => found.pid !== pid)
  t.not(found.pid, pid)
  const listed = await until(async () => (await storage.listEvents({ limit: 1000 }))!.some(listed => listed.id === event.id), listed => listed)
  t.ok(listed, 'the feed lists an event written after that snapshot')
})

t.test('a role that may not see other roles\' sessions gets no pid, and how long the oldest event held back has waited', { skip: !db.server && 'PGlite has one role and one session' }, async t => {
  // A table of its own, so that no event but this test's can wait.
  const own = db.freshTable()
  const ownStorage = postgresStorage({ client: db.client, table: own })
  await ownStorage.init!()
  const role = `${own}_reader`
  await db.client.query(`CREATE ROLE "${role}" NOLOGIN`, [])
  await db.client.query(`GRANT SELECT ON "${own}_events", "${own}_schema" TO "${role}"`, [])
  const restricted = await db.session()
  await restricted.query(`SET ROLE "${role}"`, [])
  t.teardown(async () => {
    await restricted.query('RESET ROLE', [])
    await db.client.query(`REVOKE ALL ON "${own}_events", "${own}_schema" FROM "${role}"`, [])
    await db.client.query(`DROP ROLE "${role}"`, [])
  })
  const seen = feedHealthOf(tablesOf(own), runnerOf(restricted, false).query, 0)

  const writer = await openWriter()
  t.teardown(writer.commit)
  const nothingWaits = await seen()
  t.same(nothingWaits, { heldBackSeconds: 0 }, 'no event waits yet: the feed holds nothing back')
  // Written after the open transaction took its id, so listed only once it ends; its `at` an hour ago.
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString()
  const event = createdEvent(storedOrder({ customerId: 'cus_waiting', createdAt: hourAgo, updatedAt: hourAgo }))
  await ownStorage.create(event.order, event)
  const found = await seen()
  t.same(Object.keys(found), ['heldBackSeconds'], 'no pid')
  t.ok(found.heldBackSeconds >= 3599 && found.heldBackSeconds < 3700, `held back ${found.heldBackSeconds} s`)
  t.equal((await until(health, found => found.pid === writer.pid)).pid, writer.pid, 'a role that may see it gets the pid')
})

t.test('app.orders.feedHealth names the open transaction, and the plugin warns of it past feedStallWarning until it ends', async t => {
  const { lines, stream } = logLines()
  const app = Fastify({ logger: { stream } })
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table: db.freshTable() }), feedStallWarning: 1000 })
  await app.ready()
  const writer = await openWriter()
  const found = await until(() => app.orders.feedHealth(), found => found.pid === writer.pid && found.heldBackSeconds >= 1)
  t.equal(found.pid, writer.pid)
  await eventually('a warning names the transaction', () => lines.some(line => line.level === 40 && /held the event feed back/.test(line.msg)))
  const warning = lines.find(line => line.level === 40 && /held the event feed back/.test(line.msg))!
  t.equal(warning.backendPid, writer.pid, db.server ? 'the pid of the session left idle in transaction' : 'none for a prepared transaction')
  t.match(warning.startedAt, /^\d{4}-\d\d-\d\dT/)
  await writer.commit()
  await eventually('the end of the stall is logged', () => lines.some(line => line.level === 30 && /no longer holds the event feed back/.test(line.msg)))
})
