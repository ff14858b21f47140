// The desk stays live: orders created, moved or changed by another app instance on the same storage show without a reload, and a lost stream resumes from the last event seen.
import type { IncomingMessage } from 'node:http'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import orderPlugin, { memoryStorage, type OrderStorage } from '../../lib/index.js'
import { createOrder } from '../helper.js'
import { listening, newPage, pageErrors, skip } from './browser.js'
import { storages, type SharedStorages } from './storages.js'

/** An instance on `storage`; `streams` gets the request of every event stream it serves, `lists` counts its pages served. */
async function instance (t: Test, storage: OrderStorage, streams?: IncomingMessage[], lists?: { count: number }): Promise<FastifyInstance> {
  const app = Fastify()
  t.teardown(() => app.close())
  if (streams !== undefined) app.addHook('onRequest', async request => { if (request.url.endsWith('/order/events')) streams.push(request.raw) })
  if (lists !== undefined) app.addHook('onRequest', async request => { if (request.url.endsWith('/order/getOrderList')) lists.count++ })
  await app.register(orderPlugin, { storage, desk: true, changes: true })
  await app.ready()
  return app
}

/** The desk of `app` open in a new page, with an order `other` created listed, and its event stream open. */
async function openDesk (t: Test, app: FastifyInstance, other: FastifyInstance, streams: IncomingMessage[]) {
  const first = await createOrder(other)
  const page = await newPage(t)
  await page.goto(`${await listening(app)}/order/desk`)
  await page.getByRole('link', { name: `#${first.number}` }).waitFor()
  while (streams.length === 0) await new Promise(resolve => setTimeout(resolve, 20))
  return { first, page }
}

const sharedMemory: SharedStorages = async () => { const storage = memoryStorage(); return [storage, storage] }

for (const [name, shared] of [['memory', sharedMemory] as [string, SharedStorages], ...storages]) {
  t.test(`on ${name}, what another instance creates, moves and changes shows on the open page, and a lost stream resumes`, { skip: skip || (typeof shared === 'string' && shared) }, async t => {
    const [mine, theirs] = await (shared as SharedStorages)(t)
    const streams: IncomingMessage[] = []
    const app = await instance(t, mine, streams)
    const other = await instance(t, theirs)
    const { first, page } = await openDesk(t, app, other, streams)

    const second = await createOrder(other)
    await page.getByRole('link', { name: `#${second.number}` }).waitFor()
    await page.getByRole('status').filter({ hasText: `Order #${second.number} created` }).waitFor()
    t.pass('an order created on another instance shows in the list')

    await page.getByRole('link', { name: `#${first.number}` }).click()
    await page.getByRole('button', { name: 'Move to paid' }).waitFor()
    await other.orders.updateStatus({ id: first.id, status: 'paid' })
    await page.getByRole('button', { name: 'Move to shipped' }).waitFor()
    await page.getByRole('status').filter({ hasText: `Order #${first.number} changed` }).waitFor()
    t.pass('a move on another instance shows on the open order')

    // The connection drops; what happens meanwhile arrives once the page has resumed from the last event it saw.
    const opened = streams.length
    streams.at(-1)!.socket.destroy()
    await other.orders.change({ id: first.id, actions: [{ type: 'recordPayment', amount: 2500, reference: 'pi_lost' }] })
    await page.getByRole('region', { name: 'Payments' }).getByText('pi_lost').waitFor()
    t.ok(streams.length > opened, 'the page opened the stream again')
    t.ok(streams.slice(opened).some(request => typeof request.headers['last-event-id'] === 'string'), 'from the last event it saw')
    t.match(await page.getByRole('region', { name: 'History' }).textContent(), 'payment')
    t.same(pageErrors.get(page), [])
  })
}

t.test('a stream resumed after an event the feed no longer has is reset: the page reloads what it shows and listens again from now', { skip }, async t => {
  const storage = memoryStorage()
  const streams: IncomingMessage[] = []
  const lists = { count: 0 }
  const app = await instance(t, storage, streams, lists)
  const other = await instance(t, storage)
  const { page } = await openDesk(t, app, other, streams)
  const second = await createOrder(other)
  await page.getByRole('link', { name: `#${second.number}` }).waitFor()

  // The connection drops, and the feed is purged past the last event the page saw before it is back.
  const opened = streams.length
  const listed = lists.count
  streams.at(-1)!.socket.destroy()
  await storage.purgeEvents!(new Date(Date.now() + 1000).toISOString(), 1000)
  const third = await createOrder(other)
  await page.getByRole('link', { name: `#${third.number}` }).waitFor()
  t.ok(streams.slice(opened).some(request => typeof request.headers['last-event-id'] === 'string'), 'the page resumed from the event it saw last')
  t.ok(lists.count > listed, 'reset: the list read again')
  const fourth = await createOrder(other)
  await page.getByRole('link', { name: `#${fourth.number}` }).waitFor()
  t.ok(streams.slice(opened).some(request => request.headers['last-event-id'] === undefined), 'then listening again without one')
  t.same(pageErrors.get(page), [])
})
