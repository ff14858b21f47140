// Example: the order server plus a subscription that relays every event to NATS JetStream. `npm run example:relay`.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import closeWithGrace from 'close-with-grace'
import { connect, type NatsConnection, type NatsError, type PubAck } from 'nats'
import { pathToFileURL } from 'node:url'
import type { OrderEvent } from '../lib/index.js'
import { buildServer } from './server.js'
import type { ExampleStorage } from './storage.js'

export interface NatsTarget {
  /** The NATS server: NATS_URL, default nats://127.0.0.1:4222. */
  url: string
  /** The JetStream stream, created if absent: NATS_STREAM, default ORDERS. */
  stream: string
  /** Events go to `<subjectPrefix>.<event type>`; the stream holds `<subjectPrefix>.>`: NATS_SUBJECT_PREFIX, default orders. */
  subjectPrefix: string
}

export function natsTarget (env: NodeJS.ProcessEnv = process.env): NatsTarget {
  return {
    url: env.NATS_URL || 'nats://127.0.0.1:4222',
    stream: env.NATS_STREAM || 'ORDERS',
    subjectPrefix: env.NATS_SUBJECT_PREFIX || 'orders'
  }
}

export interface NatsRelay {
  /** Resolves once JetStream has stored the event (or had it already, within its duplicate window); throws otherwise. */
  publish: (event: OrderEvent) => Promise<PubAck>
  close: () => Promise<void>
}

const STREAM_NOT_FOUND = 10059

/** Logs when the connection drops and comes back (the client reconnects by itself); ends when it closes. */
async function logStatus (connection: NatsConnection, log: FastifyBaseLogger): Promise<void> {
  for await (const status of connection.status()) {
    if (status.type === 'disconnect') log.warn({ server: status.data }, 'NATS connection lost; reconnecting')
    if (status.type === 'reconnect') log.info({ server: status.data }, 'NATS connection back')
  }
}

/**
 * Publishes events to JetStream, with the event id as `Nats-Msg-Id` so a redelivered event is dropped.
 * It connects on the first publish and after a connection is lost for good, so a NATS server that is
 * down makes `publish` throw (and the subscription retry), never the process exit.
 */
export function natsRelay ({ url, stream, subjectPrefix }: NatsTarget, log: FastifyBaseLogger): NatsRelay {
  let connection: NatsConnection | undefined
  let streamReady = false

  async function connected (): Promise<NatsConnection> {
    if (connection === undefined || connection.isClosed()) {
      connection = await connect({ servers: url, name: 'fastify-order relay', maxReconnectAttempts: -1, timeout: 5_000 })
      streamReady = false
      logStatus(connection, log).catch(err => log.warn({ err }, 'NATS status updates ended'))
    }
    if (!streamReady) {
      const streams = (await connection.jetstreamManager()).streams
      await streams.info(stream).catch(async (err: NatsError) => {
        if (err.api_error?.err_code !== STREAM_NOT_FOUND) throw err
        // Adding a stream with the same configuration is a no-op, so two relays starting together both succeed.
        await streams.add({ name: stream, subjects: [`${subjectPrefix}.>`] })
        log.info({ stream, subjects: `${subjectPrefix}.>` }, 'created the JetStream stream')
      })
      streamReady = true
    }
    return connection
  }

  return {
    async publish (event) {
      const nats = await connected()
      try {
        return await nats.jetstream().publish(`${subjectPrefix}.${event.type}`, JSON.stringify(event), { msgID: event.id, timeout: 5_000 })
      } catch (err) {
        // "No responders" means the stream is gone: look for it (and create it) again on the next try.
        streamReady = false
        throw err
      }
    },
    async close () {
      // Every publish was acknowledged before its handler resolved, and there is no subscription to drain.
      await connection?.close()
    }
  }
}

/** The example server (`buildServer`) plus the `nats-relay` subscription; tests pass their own target and storage. */
export async function buildRelay (options: FastifyServerOptions = { logger: true }, target = natsTarget(), exampleStorage?: ExampleStorage) {
  const app = await buildServer(options, exampleStorage)
  const relay = natsRelay(target, app.log)
  // preClose stops the subscription after its handler in flight; only then is the connection closed.
  app.addHook('onClose', () => relay.close())

  // Resolving checkpoints the event, so it resolves only once JetStream has it; a throw retries the same
  // event with backoff (logged by the subscription). A retry after a crash is dropped by the stream.
  // A relay that dies is replaced (or, restarted, resumes) within leaseTtl; NATS back is tried within maxBackoff.
  app.orders.subscribe('nats-relay', async event => {
    const ack = await relay.publish(event)
    if (ack.duplicate) app.log.info({ eventId: event.id, seq: ack.seq }, 'event already in the stream; JetStream dropped the copy')
  }, { from: 'start', leaseTtl: 10_000, maxBackoff: 5_000 })
  return app
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const app = await buildRelay()
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
}
