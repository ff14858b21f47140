// GET /order/events: the feed as Server-Sent Events, in the caller's scope, resumable with Last-Event-ID, served from the instance's one feed reader.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySerializerCompiler } from 'fastify'
import { codes } from '../errors.js'
import { isEventId, type OrderEvent } from '../feed/events.js'
import type { FanOut, FeedClient } from '../feed/fan-out.js'
import { stream as limits } from '../limits.js'
import { inScope, type OrderScope } from '../orders/scope.js'
import { errorExamples } from './response-examples.js'

export interface EventStreamOptions {
  fanOut: FanOut
  maxClients: number
  /** The caller's scope, or undefined once a refusal has been answered. */
  scopeOf: (request: FastifyRequest, reply: FastifyReply) => Promise<{ scope: OrderScope | undefined } | undefined>
  serializerCompiler: FastifySerializerCompiler<unknown>
  onRequest: unknown
  preHandler: unknown
}

const EVENT_STREAM = 'text/event-stream; charset=utf-8'

/** An event as one SSE message; JSON has no line break outside its strings, so `data` is one line. */
function messageOf (event: OrderEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

/** Each event's message, made once however many streams send it. */
const messages = new WeakMap<OrderEvent, string>()
function messageOnce (event: OrderEvent): string {
  let message = messages.get(event)
  if (message === undefined) messages.set(event, message = messageOf(event))
  return message
}

// Its `id:` field is empty, so a browser's EventSource reconnects without Last-Event-ID: from now on.
const RESET = `id:\nevent: reset\ndata: ${JSON.stringify({ code: 'ORDER_EVENT_NOT_FOUND', message: 'The feed no longer has the event this stream was to resume after; reload and reconnect' })}\n\n`

function schemaOf (maxClients: number) {
  const error = (description: string, examples: ReturnType<typeof errorExamples>) => ({ description, content: { 'application/json': { schema: { $ref: 'OrderError#' }, examples } } })
  return {
    operationId: 'streamEvents',
    tags: ['orders'],
    summary: 'Stream order events',
    description: 'Server-Sent Events: each event of the feed whose order is in the caller\'s scope, as `id: <event id>`, `event: <type>` (created, statusChanged, changed) and `data: <the event as JSON>`, in feed order, with a comment line at least every 15 seconds. ' +
      '`Last-Event-ID` (or `after`) resumes right after that event, nothing skipped or repeated; an id the feed no longer has answers `event: reset` and closes: connect without one, then reload once it is open. Without one the stream starts with the events stored after it connected.',
    querystring: {
      type: 'object',
      properties: { after: { type: 'string', description: 'The id of the last event seen; the Last-Event-ID header wins when both are sent' } }
    },
    headers: {
      type: 'object',
      properties: { 'last-event-id': { type: 'string', description: 'The id of the last event seen, as EventSource sends it when it reconnects' } }
    },
    response: {
      200: { description: 'The stream of events', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      403: error('ORDER_FORBIDDEN: `authorize` denied the operation', errorExamples(new codes.ORDER_FORBIDDEN('streamEvents'))),
      503: error(`ORDER_STREAM_FULL: \`stream.maxClients\` streams are open on this instance; retry after Retry-After seconds (${limits.retryAfter})`, errorExamples(new codes.ORDER_STREAM_FULL(maxClients)))
    }
  }
}

export function eventStreamRoute (app: FastifyInstance, options: EventStreamOptions): void {
  const { fanOut, maxClients, scopeOf } = options
  app.get('/order/events', {
    serializerCompiler: options.serializerCompiler,
    onRequest: options.onRequest as never,
    preHandler: options.preHandler as never,
    schema: schemaOf(maxClients)
  }, async (request, reply) => {
    const decided = await scopeOf(request, reply)
    if (decided === undefined) return reply
    if (fanOut.size >= maxClients) {
      reply.header('retry-after', String(limits.retryAfter))
      throw new codes.ORDER_STREAM_FULL(maxClients)
    }
    const { scope } = decided
    // The header before the query: EventSource reconnects with the header, to the address it was given.
    const after = (request.headers['last-event-id'] as string | undefined) || (request.query as { after?: string }).after || undefined

    reply.hijack()
    const raw = reply.raw
    // Sent once the stream has its place in the feed, so that a client that saw them misses nothing stored after.
    const begin = () => {
      if (raw.headersSent) return
      // Headers a host's hooks set (CORS, say) go out with the stream's own.
      raw.writeHead(200, { ...reply.getHeaders() as Record<string, string>, 'content-type': EVENT_STREAM, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
    }
    const client: FeedClient = {
      ready () {
        begin()
        raw.write(': order events\n\n')
      },
      deliver (events) {
        for (const event of events) {
          if (inScope(event.order, scope)) raw.write(messageOnce(event))
        }
      },
      reset () {
        begin()
        raw.end(RESET)
      },
      end () {
        begin()
        raw.end()
      },
      heartbeat () {
        raw.write(':\n\n')
      }
    }
    raw.on('close', () => { fanOut.leave(client) })
    // An id that is no event id names no event in the feed.
    if (after !== undefined && !isEventId(after)) client.reset()
    else fanOut.open(client, after)
    return reply
  })
}
