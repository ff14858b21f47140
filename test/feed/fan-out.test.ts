// The feed reader shared by the event streams: one read per poll for all of them, and the streams it serves when the feed fails or loses its place.
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { codes } from '../../lib/errors.js'
import { createFanOut, type FanOutOptions, type FeedClient } from '../../lib/feed/fan-out.js'
import type { OrderEvent } from '../../lib/feed/events.js'
import { eventually, logLines, storedOrder } from '../helper.js'
import Fastify from 'fastify'

/** A feed in memory whose reads a test counts, fails or purges. */
function fakeFeed () {
  const events: OrderEvent[] = []
  let failure: Error | undefined
  const feed = {
    events,
    reads: 0,
    fail (err: Error | undefined) { failure = err },
    add (count = 1) {
      for (let i = 0; i < count; i++) {
        const order = storedOrder()
        events.push({ id: randomUUID(), type: 'created', at: order.createdAt, order })
      }
    },
    purge (count: number) { events.splice(0, count) },
    read: async (after: string | undefined, limit: number) => {
      feed.reads++
      if (failure !== undefined) throw failure
      const at = after === undefined ? 0 : events.findIndex(event => event.id === after) + 1
      if (at === 0 && after !== undefined) throw new codes.ORDER_EVENT_NOT_FOUND(after)
      return events.slice(at, at + limit)
    }
  }
  return feed
}

/** A stream that records what it is given. */
function recorder () {
  const client = {
    ids: [] as string[],
    ready: false,
    reset: false,
    ended: false,
    heartbeats: 0,
    feedClient: undefined as unknown as FeedClient
  }
  client.feedClient = {
    ready: () => { client.ready = true },
    deliver: events => { client.ids.push(...events.map(event => event.id)) },
    reset: () => { client.reset = true },
    end: () => { client.ended = true },
    heartbeat: () => { client.heartbeats++ }
  }
  return client
}

/** A fake feed and the reader over it (with `options`, or those made of the feed), closed when `t` ends. */
function readerOf (t: Test, options: Partial<FanOutOptions> | ((feed: ReturnType<typeof fakeFeed>) => Partial<FanOutOptions>) = {}) {
  const feed = fakeFeed()
  const fanOut = createFanOut({ read: feed.read, pollInterval: 5, heartbeat: 15_000, readSize: 10, history: 20, log: Fastify().log, ...typeof options === 'function' ? options(feed) : options })
  t.teardown(() => fanOut.close())
  return { feed, fanOut }
}

/** A stream opened on the reader, once it has the `count` events stored after it opened. */
async function streamWith ({ feed, fanOut }: ReturnType<typeof readerOf>, count: number) {
  const client = recorder()
  fanOut.open(client.feedClient)
  feed.add(count)
  await eventually(`the stream has its ${count} events`, () => client.ids.length === count)
  return client
}

t.test('one read per poll serves every stream, however many are open', async t => {
  const { feed, fanOut } = readerOf(t, { pollInterval: 1000 })
  const clients = Array.from({ length: 50 }, recorder)
  for (const client of clients) fanOut.open(client.feedClient)
  await eventually('every stream has its place', () => clients.every(client => client.ready))
  const before = feed.reads
  feed.add(3)
  fanOut.wake()
  await eventually('every stream has the events', () => clients.every(client => client.ids.length === 3))
  t.equal(feed.reads - before, 1, 'one read for 50 streams')
  t.equal(fanOut.size, 50)
})

t.test('streams resumed from far back read their own pages, then join the reader as it moves on, nothing skipped or repeated', async t => {
  const { feed, fanOut } = readerOf(t)
  feed.add(100)
  const live = recorder()
  fanOut.open(live.feedClient)
  await eventually('the live stream has its place', () => live.ready)
  // Each resumes from its own place while events keep coming: more than a read (10) and the kept events (20) behind.
  const resumed = [0, 5, 40, 75, 95].map(from => ({ from, client: recorder() }))
  for (const { from, client } of resumed) fanOut.open(client.feedClient, feed.events[from]!.id)
  for (let i = 0; i < 30; i++) {
    feed.add(1)
    fanOut.wake()
    await new Promise(resolve => setImmediate(resolve))
  }
  await eventually('every stream has every event', () => resumed.every(({ from, client }) => client.ids.length === 130 - from - 1))
  for (const { from, client } of resumed) t.same(client.ids, feed.events.slice(from + 1).map(event => event.id), `resumed after event ${from}`)
  t.same(live.ids, feed.events.slice(100).map(event => event.id))
})

t.test('a stream resumed from an event the reader has not read yet waits for it, then joins', async t => {
  const { feed, fanOut } = readerOf(t, { pollInterval: 60_000 })
  const live = recorder()
  fanOut.open(live.feedClient)
  await eventually('the live stream has its place', () => live.ready)
  // Stored by another instance: the reader sees it at its next poll, the resumed stream at its own read.
  feed.add(1)
  const resumed = recorder()
  fanOut.open(resumed.feedClient, feed.events[0]!.id)
  await new Promise(resolve => setTimeout(resolve, 20))
  fanOut.wake()
  await eventually('the live stream has the event', () => live.ids.length === 1)
  feed.add(1)
  fanOut.wake()
  await eventually('both have the next event', () => live.ids.length === 2 && resumed.ids.length === 1)
  t.same(resumed.ids, [feed.events[1]!.id])
})

t.test('the reader stops with its last stream and starts again where it was, silently, with the next', async t => {
  const { feed, fanOut } = readerOf(t)
  const first = await streamWith({ feed, fanOut }, 2)
  fanOut.leave(first.feedClient)
  t.equal(fanOut.size, 0)
  await new Promise(resolve => setTimeout(resolve, 30))
  const reads = feed.reads
  await new Promise(resolve => setTimeout(resolve, 30))
  t.equal(feed.reads, reads, 'no read while no stream is open')
  feed.add(25)
  const second = recorder()
  fanOut.open(second.feedClient)
  await eventually('the second stream has its place', () => second.ready)
  feed.add(1)
  await eventually('the second stream has the new event', () => second.ids.length === 1)
  t.same(second.ids, [feed.events.at(-1)!.id], 'only what was stored after it connected')
})

t.test('a stream resuming at the reader\'s place before a restart joins it with nothing repeated', async t => {
  const { feed, fanOut } = readerOf(t)
  const first = await streamWith({ feed, fanOut }, 2)
  fanOut.leave(first.feedClient)
  await new Promise(resolve => setTimeout(resolve, 20))
  const resumed = recorder()
  fanOut.open(resumed.feedClient, feed.events[1]!.id)
  feed.add(1)
  await eventually('the resumed stream has the new event', () => resumed.ids.length === 1)
  t.same(resumed.ids, [feed.events[2]!.id])
})

t.test('a failed read of the shared reader is logged and tried again; a stream\'s own failed read ends that stream', async t => {
  const lines = logLines()
  // It keeps the last event it read only: a stream after the first reads its own pages.
  const { feed, fanOut } = readerOf(t, { log: Fastify({ logger: { stream: lines.stream } }).log, history: 1 })
  feed.add(3)
  const live = recorder()
  fanOut.open(live.feedClient)
  await eventually('the live stream has its place', () => live.ready)
  feed.fail(new Error('database down'))
  const resuming = recorder()
  fanOut.open(resuming.feedClient, feed.events[0]!.id)
  await eventually('the resuming stream ended', () => resuming.ended)
  t.notOk(resuming.reset, 'ended, not reset: its client resumes from its last event')
  await eventually('the shared reader\'s failure is logged', () => lines.lines.some(line => /could not read the feed; trying again/.test(line.msg)))
  feed.fail(undefined)
  feed.add(1)
  await eventually('the live stream goes on once the feed answers again', () => live.ids.length === 1)
  t.notOk(live.ended)
})

t.test('when the feed purges the reader\'s place, its streams are reset and it starts again', async t => {
  const { feed, fanOut } = readerOf(t)
  const live = await streamWith({ feed, fanOut }, 2)
  feed.purge(2)
  feed.add(1)
  await eventually('the live stream is reset', () => live.reset)
  t.equal(fanOut.size, 0)
  const next = recorder()
  fanOut.open(next.feedClient)
  await eventually('a new stream has its place', () => next.ready)
  feed.add(1)
  await eventually('the new stream has the new event', () => next.ids.length === 1)
  t.same(next.ids, [feed.events.at(-1)!.id])
})

t.test('a stream that leaves while it catches up reads no further; one opened after close ends at once', async t => {
  let release!: () => void
  const gate = new Promise<void>(resolve => { release = resolve })
  const { feed, fanOut } = readerOf(t, feed => ({
    read: async (after, limit) => {
      if (after === feed.events[0]!.id) await gate
      if (after === feed.events[1]!.id) {
        await gate
        throw new Error('database down')
      }
      return feed.read(after, limit)
    }
  }))
  feed.add(30)
  const live = recorder()
  fanOut.open(live.feedClient)
  await eventually('the live stream has its place', () => live.ready)
  const leaving = recorder()
  const failing = recorder()
  fanOut.open(leaving.feedClient, feed.events[0]!.id)
  fanOut.open(failing.feedClient, feed.events[1]!.id)
  await new Promise(resolve => setTimeout(resolve, 20))
  fanOut.leave(leaving.feedClient)
  fanOut.leave(failing.feedClient)
  release()
  await new Promise(resolve => setTimeout(resolve, 20))
  t.same(leaving.ids, [], 'nothing delivered after it left')
  t.notOk(failing.ended, 'a read that fails after its stream left ends nothing more')
  await fanOut.close()
  t.ok(live.ended, 'close ends the open streams')
  const late = recorder()
  fanOut.open(late.feedClient)
  t.ok(late.ended)
  t.equal(fanOut.size, 0)
})

t.test('heartbeats reach every open stream and stop with the last', async t => {
  const { fanOut } = readerOf(t, { heartbeat: 5 })
  const client = recorder()
  fanOut.open(client.feedClient)
  await eventually('heartbeats', () => client.heartbeats >= 2)
  fanOut.leave(client.feedClient)
  const beats = client.heartbeats
  await new Promise(resolve => setTimeout(resolve, 30))
  t.equal(client.heartbeats, beats)
})

t.test('a stream that leaves before it has its place is never made ready', async t => {
  let release!: () => void
  const gate = new Promise<void>(resolve => { release = resolve })
  const { fanOut } = readerOf(t, feed => ({ read: async (after, limit) => { await gate; return feed.read(after, limit) } }))
  const client = recorder()
  fanOut.open(client.feedClient)
  fanOut.leave(client.feedClient)
  release()
  await new Promise(resolve => setTimeout(resolve, 20))
  t.notOk(client.ready)
})
