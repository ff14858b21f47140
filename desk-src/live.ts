// The event stream read with fetch (EventSource cannot send the token), resumed from the last event seen after a loss.
import { addressOf, headers, type Order } from './api.js'

export interface StreamEvent { id: string, type: string, order: Order, from?: string }

export interface LiveHandlers {
  event: (event: StreamEvent) => void
  /** The feed no longer has the last event seen: what is shown may be stale. */
  reset: () => void
  unauthorized: () => void
}

const RETRY_MS = 1000
const ABSENT_RETRY_MS = 15000

export function live (handlers: LiveHandlers): { restart: () => void } {
  let lastId: string | undefined
  // The feed no longer had the last event seen: connect again at once, without it, and once the new
  // stream has its place (its answer's head), reload what is shown. In that order nothing is missed.
  let resetting = false
  let controller: AbortController | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  const later = (ms: number) => {
    clearTimeout(timer)
    timer = setTimeout(() => { connect().catch(() => {}) }, ms)
  }

  async function connect (): Promise<void> {
    controller?.abort()
    const own = controller = new AbortController()
    const extra: Record<string, string> = { accept: 'text/event-stream' }
    if (lastId !== undefined) extra['last-event-id'] = lastId
    let answer: Response
    try {
      answer = await fetch(addressOf('events'), { headers: headers(extra), signal: own.signal, cache: 'no-store', credentials: 'same-origin' })
    } catch {
      if (!own.signal.aborted) later(RETRY_MS)
      return
    }
    if (answer.status === 401) { handlers.unauthorized(); return }
    if (!answer.ok || answer.body === null) { later(answer.status === 503 ? RETRY_MS * 5 : ABSENT_RETRY_MS); return }
    if (resetting) {
      resetting = false
      handlers.reset()
    }
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    let fields: Record<string, string> = {}
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += value
        let end: number
        while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
          const line = buffer.slice(0, end)
          buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1))
          if (line === '') {
            dispatch(fields)
            fields = {}
          } else if (!line.startsWith(':')) {
            const colon = line.indexOf(':')
            const name = colon < 0 ? line : line.slice(0, colon)
            const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
            fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${text}` : text
          }
        }
      }
    } catch {
      // A lost connection: resumed below from the last event seen.
    }
    if (!own.signal.aborted) later(resetting ? 0 : RETRY_MS)
  }

  function dispatch (fields: Record<string, string>) {
    if (fields.event === 'reset') {
      lastId = undefined
      resetting = true
      return
    }
    if (fields.data === undefined) return
    if (fields.id !== undefined) lastId = fields.id
    try {
      const event = JSON.parse(fields.data) as StreamEvent
      handlers.event({ ...event, type: fields.event ?? event.type })
    } catch {
      // Not an event of the feed: nothing to show.
    }
  }

  connect().catch(() => {})
  return { restart: () => { later(0) } }
}
