// The feed-stall watch: a warning naming the pid and the start past feedStallWarning, again at each doubling, a word when it ends.
import t from 'tap'
import { feedNeverHeldBack, pollIntervalOf, watchFeedStall, type FeedHealth, type WatchClock } from '../../lib/feed/feed-stall.js'

const START = Date.parse('2026-01-01T10:00:00.000Z')

/** A clock that moves only when told, and timers that fire only when told. */
function fakeClock () {
  let now = START
  const timers = new Map<number, { run: () => void, ms: number }>()
  let last = 0
  const clock: WatchClock & { at: (ms: number) => void, fire: () => void, timers: typeof timers } = {
    now: () => now,
    at (ms) { now = START + ms },
    setTimeout (run, ms) {
      timers.set(++last, { run, ms })
      return last
    },
    clearTimeout (timer: number) { timers.delete(timer) },
    /** Fires the pending timers. */
    fire () {
      const pending = [...timers]
      timers.clear()
      for (const [, { run }] of pending) run()
    },
    timers
  }
  return clock
}

function recordingLog () {
  const lines: Array<{ level: 'warn' | 'info', fields: Record<string, unknown>, message: string }> = []
  return {
    lines,
    warn: (fields: Record<string, unknown>, message: string) => { lines.push({ level: 'warn', fields, message }) },
    info: (fields: Record<string, unknown>, message: string) => { lines.push({ level: 'info', fields, message }) }
  } as any
}

/**
 * A watch over a transaction that began at START (or `began` ms after it) and a health that says so
 * at each look: `look(ms, health)` sets the clock to START + ms and checks.
 */
function watch (feedStallWarning = 60_000) {
  const clock = fakeClock()
  const log = recordingLog()
  let health: FeedHealth | Error = { heldBackSeconds: 0 }
  let reads = 0
  const watcher = watchFeedStall({
    read: async () => {
      reads++
      if (health instanceof Error) throw health
      return health
    },
    feedStallWarning,
    log,
    clock
  })
  return {
    watcher,
    clock,
    lines: log.lines as Array<{ level: string, fields: Record<string, unknown>, message: string }>,
    reads: () => reads,
    async look (ms: number, next: FeedHealth | Error, began = 0) {
      clock.at(ms)
      health = next instanceof Error ? next : { ...next, heldBackSeconds: next.heldBackSeconds === 0 ? 0 : (ms - began) / 1000 }
      await watcher.check()
    }
  }
}

const held = { heldBackSeconds: 1, pid: 4242 }
const free = { heldBackSeconds: 0 }
const at = (ms: number) => new Date(START + ms).toISOString()

t.test('a transaction holding the feed past feedStallWarning is warned of once, naming its pid and start, and again at each doubling', async t => {
  const { look, lines } = watch(60_000)
  for (const ms of [0, 30_000, 59_999]) await look(ms, held)
  t.same(lines, [], 'nothing below the threshold')
  for (const ms of [60_000, 90_000, 119_000, 120_000, 200_000, 240_000]) await look(ms, held)
  t.same(lines.map(line => [line.level, line.fields]), [
    ['warn', { backendPid: 4242, startedAt: at(0), heldBackSeconds: 60 }],
    ['warn', { backendPid: 4242, startedAt: at(0), heldBackSeconds: 120 }],
    ['warn', { backendPid: 4242, startedAt: at(0), heldBackSeconds: 240 }]
  ])
  t.match(lines[0]!.message, /pid 4242/)
  t.match(lines[0]!.message, at(0))

  // First seen long past the threshold: one warning, and the next at the doubling after its age.
  const late = watch(60_000)
  await late.look(1_000_000, held)
  await late.look(1_900_000, held)
  await late.look(1_920_000, held)
  t.same(late.lines.map(line => line.fields.heldBackSeconds), [1000, 1920])
})

t.test('once the transaction no longer holds the feed, the watch says so once, and a later stall is warned of afresh', async t => {
  const { look, lines } = watch(60_000)
  await look(60_000, held)
  await look(75_000, free)
  await look(90_000, free)
  t.same(lines.map(line => [line.level, line.fields]), [
    ['warn', { backendPid: 4242, startedAt: at(0), heldBackSeconds: 60 }],
    ['info', { backendPid: 4242, startedAt: at(0) }]
  ])
  t.match(lines[1]!.message, /pid 4242/)
  await look(160_000, held, 100_000)
  t.same(lines[2]?.fields, { backendPid: 4242, startedAt: at(100_000), heldBackSeconds: 60 }, 'the same backend\'s next transaction')
})

t.test('another transaction that holds the feed past the threshold is a stall of its own', async t => {
  const { look, lines } = watch(60_000)
  await look(60_000, held)
  await look(100_000, { heldBackSeconds: 1, pid: 7 }, 20_000)
  t.same(lines.map(line => [line.level, line.fields.backendPid, line.fields.startedAt]), [
    ['warn', 4242, at(0)],
    ['info', 4242, at(0)],
    ['warn', 7, at(20_000)]
  ])
})

t.test('a transaction without a pid is warned of all the same, saying why it has none', async t => {
  const { look, lines } = watch(60_000)
  await look(60_000, { heldBackSeconds: 1 })
  t.same(lines.map(line => [line.level, line.fields]), [['warn', { backendPid: undefined, startedAt: at(0), heldBackSeconds: 60 }]])
  t.match(lines[0]!.message, /prepared transaction/)
})

t.test('a read that fails is logged once per run of failures, never thrown', async t => {
  const { look, lines } = watch(60_000)
  const failure = new Error('connection refused')
  await look(1000, failure)
  await look(2000, failure)
  await look(3000, free)
  await look(4000, failure)
  t.same(lines.map(line => [line.level, line.fields.err]), [['warn', failure], ['warn', failure]])
})

t.test('feedStallWarning 0 turns the watch off: no timer, no read', async t => {
  const { watcher, clock, reads, lines } = watch(0)
  watcher.start()
  t.equal(clock.timers.size, 0)
  await watcher.check()
  t.equal(reads(), 0)
  await watcher.close()
  t.same(lines, [])
})

t.test('the watch looks every quarter of the threshold, between 1 s and 1 min, and stops at close', async t => {
  t.same([1, 4000, 60_000, 3_600_000].map(pollIntervalOf), [1000, 1000, 15_000, 60_000])
  const { watcher, clock, reads } = watch(60_000)
  watcher.start()
  watcher.start()
  t.same([...clock.timers.values()].map(timer => timer.ms), [15_000], 'one timer, however often started')
  clock.fire()
  await watcher.close()
  t.equal(reads(), 1)
  t.equal(clock.timers.size, 0, 'the look under way schedules no other once closed')

  const { watcher: again, clock: clockAgain, reads: readsAgain } = watch(60_000)
  again.start()
  clockAgain.fire()
  await new Promise(resolve => setImmediate(resolve))
  t.equal(clockAgain.timers.size, 1, 'after a look, the next is scheduled')
  await again.close()
  t.equal(clockAgain.timers.size, 0)
  again.start()
  t.equal(clockAgain.timers.size, 0, 'a closed watch does not start again')
  t.equal(readsAgain(), 1)
})

t.test('on the system clock the watch keeps no process alive and closes at once', async t => {
  const lines: unknown[] = []
  const watcher = watchFeedStall({ read: async () => ({ heldBackSeconds: 90, pid: 1 }), feedStallWarning: 60_000, log: { warn: (fields: unknown) => lines.push(fields), info () {} } as any })
  watcher.start()
  await watcher.check()
  await watcher.close()
  t.match(lines, [{ backendPid: 1, heldBackSeconds: 90 }])
})

t.test('a storage without a horizon, memory\'s, never holds the feed back', async t => {
  t.same(await feedNeverHeldBack(), { heldBackSeconds: 0 })
})
