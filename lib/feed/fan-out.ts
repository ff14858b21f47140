// One feed reader per instance for every open event stream: it reads the feed once per poll and hands each page to every stream that has joined it.
import type { FastifyBaseLogger } from 'fastify'
import { loggableFailure } from './describe-failure.js'
import type { OrderEvent } from './events.js'

/** One open stream, as the reader sees it. */
export interface FeedClient {
  /** The stream has its place in the feed: what is stored from now on reaches it. */
  ready: () => void
  /** Events in feed order, each once, none skipped. */
  deliver: (events: readonly OrderEvent[]) => void
  /** The feed no longer has the event the stream was after (purged): it cannot go on without a gap. */
  reset: () => void
  /** The stream ends: the app closes, or its own read of the feed failed. */
  end: () => void
  /** A comment line, so that proxies keep an idle stream open. */
  heartbeat: () => void
}

export interface FanOutOptions {
  /** A page of the feed after `after` (undefined: from its oldest event); throws ORDER_EVENT_NOT_FOUND when `after` is no longer in it. */
  read: (after: string | undefined, limit: number) => Promise<readonly OrderEvent[]>
  pollInterval: number
  heartbeat: number
  /** Events one read lists. */
  readSize: number
  /** Events kept after reading them, so that a stream catching up can join without a read of its own. */
  history: number
  log: FastifyBaseLogger
}

export interface FanOut {
  /** Open streams, those still catching up included. */
  readonly size: number
  /**
   * Adds a stream: after `after` when given (its own reads until it reaches the shared reader, then
   * the shared reader's pages), else with the events stored from now on.
   */
  open: (client: FeedClient, after?: string) => void
  /** The stream's connection ended. */
  leave: (client: FeedClient) => void
  /** This instance stored an event: read now rather than at the next poll. */
  wake: () => void
  /** Ends every stream and the reader; resolves once a read under way has ended. */
  close: () => Promise<void>
}

const isNotFound = (err: unknown) => (err as { code?: unknown } | null)?.code === 'ORDER_EVENT_NOT_FOUND'

/**
 * The reader and its streams. The reader runs while a stream is open and keeps its place between runs.
 * A stream joins it at an event the reader has read (its place, or one in the events it keeps), and
 * gets the kept events after that one first: as joining happens with no wait between the check and
 * the join, no event is skipped or given twice at the hand-over.
 */
export function createFanOut (options: FanOutOptions): FanOut {
  const { read, pollInterval, readSize, log } = options
  /** Every open stream; `joined` are those the reader hands its pages to. */
  const clients = new Set<FeedClient>()
  const joined = new Set<FeedClient>()
  /** The last event the reader read; undefined: none yet (it reads from the oldest). */
  let position: string | undefined
  /** The events read last, oldest first; `base` is the event before the first of them (undefined: the feed's start). */
  let kept: OrderEvent[] = []
  let base: string | undefined
  /** Whether the reader has reached the newest event listed since it started. */
  let caughtUp = false
  /** Called at the end of each read: streams waiting for the reader to pass a place. */
  let waiting: Array<() => void> = []
  let running: Promise<void> | undefined
  let again = false
  let sleeping: { timer: NodeJS.Timeout, wake: () => void } | undefined
  let heartbeats: NodeJS.Timeout | undefined
  let closed = false

  function afterRead (): Promise<void> {
    return new Promise(resolve => { waiting.push(resolve) })
  }

  function settle (): void {
    const ready = waiting
    waiting = []
    for (const resume of ready) resume()
  }

  /**
   * Joins `client` after the event `after` when the reader has read it: its place is `base` or the
   * last event it keeps. False when it has not read it yet, or no longer keeps it.
   */
  function join (client: FeedClient, after: string | undefined): boolean {
    const at = after === base ? 0 : kept.findIndex(event => event.id === after) + 1
    if (at === 0 && after !== base) return false
    joined.add(client)
    if (at < kept.length) client.deliver(kept.slice(at))
    return true
  }

  /** The stream's own reads from `after` until it reaches the reader. */
  async function follow (client: FeedClient, after: string | undefined): Promise<void> {
    while (clients.has(client)) {
      if (join(client, after)) return
      let page: readonly OrderEvent[]
      try {
        page = await read(after, readSize)
      } catch (err) {
        if (!clients.has(client)) return
        clients.delete(client)
        if (isNotFound(err)) client.reset()
        else {
          log.warn({ err: loggableFailure(err) }, 'fastify-order: an event stream could not read the feed; it ends and its client resumes from its last event')
          client.end()
        }
        return
      }
      if (!clients.has(client)) return
      if (page.length > 0) {
        client.deliver(page)
        after = page.at(-1)!.id
      } else {
        // At the newest event, and the reader has not read it yet: wait for its next read.
        await afterRead()
      }
    }
  }

  /** Where a new stream starts: the reader's place once it has caught up with the feed. */
  async function now (): Promise<string | undefined> {
    // eslint-disable-next-line no-unmodified-loop-condition -- the reader sets it while this waits
    while (!caughtUp) await afterRead()
    return position
  }

  function keep (page: readonly OrderEvent[]): void {
    kept.push(...page)
    const over = kept.length - options.history
    if (over > 0) {
      base = kept[over - 1]!.id
      kept = kept.slice(over)
    }
  }

  async function run (): Promise<void> {
    // eslint-disable-next-line no-unmodified-loop-condition -- close() sets it while this waits
    while (clients.size > 0 && !closed) {
      again = false
      let page: readonly OrderEvent[] = []
      try {
        page = await read(position, readSize)
      } catch (err) {
        if (isNotFound(err)) {
          // Purged under the reader: its streams cannot go on without a gap; it starts again from the oldest.
          for (const client of joined) {
            clients.delete(client)
            client.reset()
          }
          joined.clear()
          position = base = undefined
          kept = []
          caughtUp = false
          continue
        }
        log.warn({ err: loggableFailure(err) }, 'fastify-order: the event streams could not read the feed; trying again at the next poll')
      }
      if (page.length > 0) {
        keep(page)
        position = page.at(-1)!.id
        for (const client of joined) client.deliver(page)
      }
      if (page.length < readSize) caughtUp = true
      settle()
      if (page.length === readSize || again) continue
      await new Promise<void>(resolve => {
        const wake = () => {
          clearTimeout(timer)
          sleeping = undefined
          resolve()
        }
        const timer = setTimeout(wake, pollInterval)
        sleeping = { timer, wake }
      })
    }
    running = undefined
    settle()
  }

  function start (): void {
    if (running !== undefined) return
    // Another run may have left events it kept, from before the gap while no stream was open.
    kept = []
    base = position
    caughtUp = false
    running = run()
  }

  function stopIfIdle (): void {
    if (clients.size > 0) return
    clearInterval(heartbeats)
    heartbeats = undefined
    sleeping?.wake()
  }

  return {
    get size () { return clients.size },
    open (client, after) {
      if (closed) {
        client.end()
        return
      }
      clients.add(client)
      start()
      heartbeats ??= setInterval(() => {
        for (const each of clients) each.heartbeat()
      }, options.heartbeat)
      const from = after === undefined ? now() : Promise.resolve(after)
      // follow() never rejects: a failed read ends its stream.
      from.then(place => {
        if (!clients.has(client)) return
        client.ready()
        return follow(client, place)
      }, undefined)
    },
    leave (client) {
      clients.delete(client)
      joined.delete(client)
      stopIfIdle()
    },
    wake () {
      again = true
      sleeping?.wake()
    },
    async close () {
      closed = true
      for (const client of clients) client.end()
      clients.clear()
      joined.clear()
      stopIfIdle()
      await running
    }
  }
}
