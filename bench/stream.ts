// The event stream: an event's delivery latency to every one of 10 and 1,000 open streams of one instance, and the feed reads they cost.
// Run by bench/run.ts as `node --import tsx bench/stream.ts [--quick]`.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import type { OrderStorage } from '../lib/index.js'
import { formatCount, percentile, printTable } from './report.js'
import { loadPlugin } from './storages.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false } } })
const { orderPlugin, memoryStorage } = await loadPlugin()

const STREAMS = [10, 1000]
const EVENTS = flags.quick ? 10 : 40
// One event every so often: each event's latency is its own, not a queue's.
const WRITE_EVERY = 100
const POLL_INTERVAL = 500
// Reads counted while nothing is written: the polls alone.
const IDLE = flags.quick ? 2000 : 5000
const input = { customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }] }

/** A memory storage whose feed reads are counted. */
function countedStorage () {
  const storage = memoryStorage()
  const counted = { reads: 0, storage: { ...storage } as OrderStorage }
  counted.storage.listEvents = async query => {
    counted.reads++
    return storage.listEvents(query)
  }
  return counted
}

/** Opens `count` streams; each records when each event id arrived. Resolves once every one has its place. */
async function openStreams (url: string, count: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  const arrivals: Array<Map<string, number>> = []
  const requests: http.ClientRequest[] = []
  await Promise.all(Array.from({ length: count }, async () => new Promise<void>((resolve, reject) => {
    const arrived = new Map<string, number>()
    arrivals.push(arrived)
    const request = http.get(`${url}/order/events`, { agent }, response => {
      if (response.statusCode !== 200) reject(new Error(`the stream answered ${response.statusCode}`))
      response.setEncoding('utf8')
      let text = ''
      response.on('data', (chunk: string) => {
        const now = performance.now()
        text += chunk
        let end: number
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end)
          text = text.slice(end + 2)
          if (block.startsWith(':')) resolve()
          else if (block.startsWith('id: ')) arrived.set(block.slice(4, block.indexOf('\n')), now)
        }
      })
    })
    request.on('error', () => {})
    requests.push(request)
  })))
  return { arrivals, close: () => { for (const request of requests) request.destroy() } }
}

interface Figures {
  streams: number
  source: string
  latencies: number[]
  readsPerEvent: number
  idleReads: number
}

async function measure (streams: number): Promise<Figures[]> {
  const counted = countedStorage()
  const app = Fastify()
  await app.register(orderPlugin, { storage: counted.storage, stream: { maxClients: streams, pollInterval: POLL_INTERVAL } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  // Another instance on the same storage, without the stream: its events reach the streams through the poll.
  const other = Fastify()
  await other.register(orderPlugin, { storage: counted.storage })
  await other.ready()
  const open = await openStreams(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, streams)
  try {
    const figures: Figures[] = []
    for (const [source, writer] of [['this instance', app], ['another instance', other]] as const) {
      const sent = new Map<string, number>()
      const readsBefore = counted.reads
      for (let i = 0; i < EVENTS; i++) {
        const started = performance.now()
        const order = await writer.orders.create(input)
        // Its event id: the newest event of this order in the feed.
        sent.set(order.id, started)
        await sleep(WRITE_EVERY)
      }
      await sleep(POLL_INTERVAL * 2 + 500)
      const events = (await app.orders.listEvents({ limit: 1000 })).items.filter(event => sent.has(event.order.id))
      const latencies: number[] = []
      for (const arrived of open.arrivals) {
        for (const event of events) {
          const at = arrived.get(event.id)
          if (at === undefined) throw new Error(`an event did not reach a stream within ${POLL_INTERVAL * 2 + 500} ms after the last write`)
          latencies.push(at - sent.get(event.order.id)!)
        }
      }
      figures.push({ streams, source, latencies, readsPerEvent: (counted.reads - readsBefore) / EVENTS, idleReads: 0 })
    }
    const idleBefore = counted.reads
    await sleep(IDLE)
    for (const figure of figures) figure.idleReads = counted.reads - idleBefore
    return figures
  } finally {
    open.close()
    await app.close()
    await other.close()
  }
}

console.log(`Event stream: ${EVENTS} events written one every ${WRITE_EVERY} ms by this instance, then as many by another on the same storage (memory); poll ${POLL_INTERVAL} ms; feed reads counted on the storage, and over ${IDLE} ms with nothing written.`)
const rows: string[][] = []
for (const streams of STREAMS) {
  for (const figure of await measure(streams)) {
    const { latencies } = figure
    rows.push([
      formatCount(figure.streams), figure.source, formatCount(latencies.length),
      percentile(latencies, 50).toFixed(1), percentile(latencies, 99).toFixed(1), Math.max(...latencies).toFixed(1),
      figure.readsPerEvent.toFixed(2), String(figure.idleReads)
    ])
  }
}
printTable(['streams', 'events written by', 'deliveries', 'latency p50 ms', 'p99 ms', 'max ms', 'feed reads per event', `feed reads in ${IDLE} ms idle`], rows)
