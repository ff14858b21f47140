// Webhook delivery on memory storage, one subscription, to a local receiver that answers at once:
// events per second through a backlog, and the latency from the write to the receiver.
// Run by bench/run.ts (`npm run bench -- --only webhooks`).
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { formatCount, percentile, printTable } from './report.js'
import { libraryDir, loadPlugin } from './storages.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false } } })
const [BACKLOG, PACED] = flags.quick ? [500, 200] : [5000, 1000]
const { orderPlugin } = await loadPlugin()
const { webhook } = await import(new URL('webhooks.js', libraryDir).href) as typeof import('../lib/webhooks.js')
const secret = `whsec_${randomBytes(32).toString('base64')}`
const body = { customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] }

/** A receiver that answers 204 at once and calls `received` with each event's order id. */
async function receiver (received: (orderId: string) => void) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', chunk => chunks.push(chunk))
    request.on('end', () => {
      received(JSON.parse(Buffer.concat(chunks).toString('utf8')).data.order.id)
      response.statusCode = 204
      response.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, close: () => server.close() }
}

/** Events per second delivering a backlog of BACKLOG created events, from the subscription's start. */
async function throughput (): Promise<number> {
  let count = 0
  let done: () => void
  const finished = new Promise<void>(resolve => { done = resolve })
  const target = await receiver(() => { if (++count === BACKLOG) done() })
  const app = Fastify()
  await app.register(orderPlugin)
  for (let i = 0; i < BACKLOG; i++) await app.orders.create(body)
  const start = process.hrtime.bigint()
  app.orders.subscribe('bench', webhook({ url: target.url, secret }), { from: 'start' })
  await app.ready()
  await finished
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  await app.close()
  target.close()
  return BACKLOG / seconds
}

/** Milliseconds from each create resolving to the receiver getting its event, one create every 2 ms. */
async function latencies (): Promise<number[]> {
  const written = new Map<string, bigint>()
  const times: number[] = []
  const target = await receiver(orderId => { times.push(Number(process.hrtime.bigint() - written.get(orderId)!) / 1e6) })
  const app = Fastify()
  await app.register(orderPlugin)
  app.orders.subscribe('bench', webhook({ url: target.url, secret }))
  await app.ready()
  for (let i = 0; i < PACED; i++) {
    const order = await app.orders.create(body)
    written.set(order.id, process.hrtime.bigint())
    await sleep(2)
  }
  while (times.length < PACED) await sleep(5)
  await app.close()
  target.close()
  return times
}

const perSecond = await throughput()
const times = await latencies()
console.log(`Webhook delivery on memory storage, one subscription, to a local receiver answering 204 at once: ${formatCount(perSecond)} events/s through a backlog of ${formatCount(BACKLOG)}.`)
console.log(`Latency from app.orders.create resolving to the receiver, ${formatCount(PACED)} creates one every 2 ms (ms):`)
printTable(['p50', 'p99', 'max'], [[percentile(times, 50).toFixed(2), percentile(times, 99).toFixed(2), Math.max(...times).toFixed(2)]])
