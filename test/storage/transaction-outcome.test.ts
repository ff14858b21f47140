// The outcome of a host's transaction, as the plugin learns it from any storage that joins one: listeners after a commit, a log line when it cannot tell.
import t from 'tap'
import Fastify from 'fastify'
import orderPlugin, { memoryStorage, type OrderStorage, type TransactionClient } from '../../lib/index.js'
import { eventually, logLines, orderBody } from '../helper.js'

/** The host's transaction client: this storage needs nothing of it. */
const client = {} as TransactionClient

/** A memory storage that joins any "transaction": its outcome is whatever `settled` answers. */
function joiningStorage (settled: (signal: AbortSignal) => Promise<boolean>): OrderStorage {
  const storage = memoryStorage()
  return {
    ...storage,
    joinTransaction: () => ({ ...storage, settled: (_eventId: string, signal: AbortSignal) => settled(signal) })
  } as OrderStorage
}

t.test('a transaction whose outcome cannot be learned is logged, and its listeners do not run', async t => {
  const { lines, stream } = logLines()
  const app = Fastify({ logger: { stream } })
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: joiningStorage(async () => { throw new Error('the database went away') }) })
  const created: string[] = []
  app.orders.on('created', order => { created.push(order.id) })
  await app.orders.withTransaction(client).create(orderBody())
  await eventually('the failure to learn the outcome is logged', () => lines.some(line => /could not learn whether a transaction committed/.test(line.msg)))
  t.same(created, [], 'no listener ran for a change that may not have committed')
})

t.test('once the app closes, a transaction still open is let go without a log line', async t => {
  const { lines, stream } = logLines()
  const app = Fastify({ logger: { stream } })
  let aborted = false
  await app.register(orderPlugin, {
    // Ends only when the app closes, as a lookout does for a transaction that outlives the app.
    storage: joiningStorage(signal => new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => { aborted = true; reject(new Error('closing')) })
    }))
  })
  await app.orders.withTransaction(client).create(orderBody())
  await app.close()
  await eventually('the wait is let go', () => aborted)
  await new Promise(resolve => setImmediate(resolve))
  t.notOk(lines.some(line => /could not learn/.test(line.msg)), 'nothing to report about an app that closed')
})

t.test('a change in the host\'s transaction: its guard runs there, and its changed listener once the transaction commits', async t => {
  let commit!: (committed: boolean) => void
  const outcome = new Promise<boolean>(resolve => { commit = resolve })
  const app = Fastify()
  t.teardown(() => app.close())
  const guarded: number[] = []
  await app.register(orderPlugin, { storage: joiningStorage(() => outcome), changes: { guard: ({ order }) => { guarded.push(order.version) } } })
  const heard: number[] = []
  app.orders.on('changed', event => { heard.push(event.order.version) })
  const calls = app.orders.withTransaction(client)
  const order = await calls.create(orderBody())
  const changed = await calls.change({ id: order.id, actions: [{ type: 'recordPayment', amount: 2500, reference: 'pi_1' }] })
  t.match(changed, { version: 2, paid: 2500, balance: 0 })
  t.same(guarded, [1], 'the guard ran on the order as the transaction sees it')
  t.same(heard, [], 'no listener before the commit')
  commit(true)
  await eventually('the changed listener runs after the commit', () => heard.length === 1)
  t.same(heard, [2])
})

t.test('a joined storage without readChangeClaim has a change\'s key read through the storage: a retry in another transaction replays', async t => {
  const storage = memoryStorage()
  const { readChangeClaim: _, ...joined } = storage
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: { ...storage, joinTransaction: () => ({ ...joined, settled: async () => true }) } as OrderStorage, changes: true })
  const order = await app.orders.create(orderBody())
  const change = { id: order.id, actions: [{ type: 'cancelItem' as const, index: 0, quantity: 1 }] }
  const first = await app.orders.withTransaction(client).change(change, { idempotencyKey: 'k' })
  const retried = await app.orders.withTransaction(client).change(change, { idempotencyKey: 'k' })
  t.same(retried, first, 'the first change\'s order')
  t.equal((await storage.get(order.id))!.version, 2, 'stored once')
})
