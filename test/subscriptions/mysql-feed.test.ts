// The MySQL feed under stress: writers on several instances, transactions held open for seconds and a
// writer killed with SIGKILL, while a reader pages the feed; it must list every committed event once.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Pool } from 'mysql2/promise'
import t, { type Test } from 'tap'
import orderPlugin, { type OrderEvent } from '../../lib/index.js'
import { mysqlStorage } from '../../lib/storage/mysql/mysql-storage.js'
import { mysqlUrl, testMysql } from '../mysql-helper.js'

// At most this many orders each writer loop of this process creates and moves to paid.
const MAX_ORDERS_PER_WRITER = 300
// Changes the child process reports committed before it is killed.
const CHILD_CHANGES_BEFORE_KILL = 40
// How long the long transactions stay open while the others write.
const HELD_OPEN = 3000
// A bounded wait for anything the test waits on: the sequencer's lease held by the killed process lapses first.
const PATIENCE = 90_000

const input = (customerId: string) => ({ customerId, currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] })

// A skipped test rather than plan(0): in test/subscriptions.ts this file's tests run among others.
if (mysqlUrl === '') t.test('the MySQL feed under concurrent writers', { skip: 'MYSQL_URL is not set: no MariaDB or MySQL server for the feed stress test' }, async () => {})
else {
  // A child's start, a kill, seconds-long transactions and a lapsed lease: slower than most files.
  t.setTimeout(240_000)
  t.test('a reader paging the feed during concurrent writers, long transactions and a writer killed with SIGKILL lists every committed event once, each order\'s in version order', async t => {
    const db = testMysql(t)
    const table = db.freshTable()

    // The child first: it makes the tables, then writes until it is killed.
    const child = fork(new URL('../fixtures/mysql-writer.ts', import.meta.url), [], {
      env: { ...process.env, MYSQL_URL: mysqlUrl, TABLE: table, WRITERS: '3' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    t.teardown(() => { child.kill('SIGKILL') })
    const childCommitted: string[] = []
    let childReady = false
    child.on('message', (message: { ready?: true, id?: string, version?: number }) => {
      if (message.ready === true) childReady = true
      else childCommitted.push(`${message.id}:${message.version}`)
    })
    await until('the writer process serves', () => childReady)

    const pools = [db.client, db.connect(), db.connect()]
    const apps = await Promise.all(pools.map(pool => instance(t, pool, table)))
    const reader = await instance(t, db.connect(), table)
    const read: OrderEvent[] = []
    const listed = new Set<string>()
    const reading = new AbortController()
    const paging = (async () => {
      while (!reading.signal.aborted) {
        const { items } = await reader.orders.listEvents({ after: read.at(-1)?.id, limit: 50 })
        read.push(...items)
        for (const { order } of items) listed.add(`${order.id}:${order.version}`)
        if (items.length === 0) await sleep(5)
      }
    })()

    // Three writer loops on each of three instances, writing until the long transactions have ended and the child is dead.
    const committed: string[] = []
    const writing = new AbortController()
    const writers = apps.flatMap((app, index) => [0, 1, 2].map(async writer => {
      for (let i = 0; !writing.signal.aborted && i < MAX_ORDERS_PER_WRITER; i++) {
        const order = await app.orders.create(input(`cus_${index}_${writer}`))
        committed.push(`${order.id}:1`)
        const paid = await app.orders.updateStatus({ id: order.id, status: 'paid' })
        committed.push(`${paid.id}:${paid.version}`)
      }
    }))

    // Two host transactions held open while everyone else writes: one commits, one rolls back.
    const held = async (pool: Pool, commit: boolean) => {
      const made: string[] = []
      const open = await db.openTransaction(async connection => {
        const orders = apps[1]!.orders.withTransaction(connection)
        const order = await orders.create(input('cus_long'))
        const paid = await orders.updateStatus({ id: order.id, status: 'paid' })
        made.push(`${order.id}:1`, `${paid.id}:${paid.version}`)
      }, pool)
      await sleep(HELD_OPEN)
      await (commit ? open.commit() : open.rollback())
      return made
    }
    const [kept, rolledBack] = [held(pools[1]!, true), held(pools[2]!, false)]

    await until('the writer process commits changes', () => childCommitted.length >= CHILD_CHANGES_BEFORE_KILL)
    child.kill('SIGKILL')
    await once(child, 'exit')
    committed.push(...await kept)
    const neverCommitted = await rolledBack
    writing.abort()
    await Promise.all(writers)

    await until('the reader lists every change known to have committed', () => [...committed, ...childCommitted].every(change => listed.has(change)))
    reading.abort()
    await paging
    // A walk from the start once every write has ended: the reader saw its events in the same order, none
    // missing between them (an event given a position before one already read would be missing).
    const all = await walk(apps[2]!)

    const ids = read.map(event => event.id)
    t.equal(new Set(ids).size, ids.length, `no event listed twice (${ids.length} listed)`)
    t.same(ids, all.slice(0, ids.length).map(event => event.id), `the reader listed what a later walk lists, in the same order (${all.length} events)`)
    t.ok(committed.length > 2 * 9 * 5, `this process's writers committed ${committed.length} changes, the long transaction's among them`)
    t.ok(childCommitted.length >= CHILD_CHANGES_BEFORE_KILL, `the killed process reported ${childCommitted.length} changes committed, every one listed`)
    t.same(neverCommitted.filter(change => listed.has(change)), [], 'nothing of the rolled-back transaction is listed')
    const versions = new Map<string, number[]>()
    for (const event of read) versions.set(event.order.id, [...versions.get(event.order.id) ?? [], event.order.version])
    t.ok([...versions.values()].every(list => list.every((version, i) => version === i + 1)), `each order's events listed in version order, from its created event (${versions.size} orders)`)
  })
}

/** An app instance on `pool`, sharing `table` with the others; closed when `t` ends. */
async function instance (t: Test, pool: Pool, table: string): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: mysqlStorage({ client: pool, table }) })
  await app.ready()
  return app
}

/** Every event the feed lists from its start. */
async function walk (app: FastifyInstance): Promise<OrderEvent[]> {
  const events: OrderEvent[] = []
  for (;;) {
    const { items } = await app.orders.listEvents({ after: events.at(-1)?.id, limit: 1000 })
    if (items.length === 0) return events
    events.push(...items)
  }
}

async function until (what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + PATIENCE
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${PATIENCE / 1000} s: ${what}`)
    await sleep(20)
  }
}
