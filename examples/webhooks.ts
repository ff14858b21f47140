// Example: the order server delivering every event as a signed webhook, and a receiver that verifies
// the signature with the standardwebhooks package. `npm run example:webhooks`.
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import closeWithGrace from 'close-with-grace'
import { Webhook } from 'standardwebhooks'
import { webhook } from '../lib/webhooks.js'
import { addressOf, buildServer } from './server.js'
import type { ExampleStorage } from './storage.js'

/**
 * The example server plus `POST /webhook-receiver`, a receiver as another service would write it: it
 * verifies each delivery with `secret` (a 401 otherwise), logs it and keeps its id.
 */
export async function buildWebhookServer (secret: string, options: FastifyServerOptions = { logger: true }, exampleStorage?: ExampleStorage) {
  const app = await buildServer(options, exampleStorage)
  const received: string[] = []
  await app.register(async receiver => {
    // The signature covers the body exactly as sent: read it as a string.
    receiver.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body))
    const verifier = new Webhook(secret)
    receiver.post('/webhook-receiver', async (request, reply) => {
      let delivery: { type: string, data: { id: string } }
      try {
        delivery = verifier.verify(request.body as string, request.headers as Record<string, string>) as typeof delivery
      } catch {
        return reply.code(401).send({ message: 'bad signature' })
      }
      request.log.info({ type: delivery.type, event: delivery.data.id }, 'webhook received')
      received.push(delivery.data.id)
      return reply.code(204).send()
    })
  })
  return { app, received }
}

/** Delivers every event, from the oldest, to `url`, as the subscription named `webhook`. */
export function startWebhook (app: FastifyInstance, url: string, secret: string): void {
  app.orders.subscribe('webhook', webhook({ url, secret }), { from: 'start' })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // WEBHOOK_SECRET shared with the receiver; WEBHOOK_URL to deliver elsewhere than to this server's receiver.
  const secret = process.env.WEBHOOK_SECRET ?? `whsec_${randomBytes(32).toString('base64')}`
  const { app } = await buildWebhookServer(secret)
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })
  const { host, port, url } = addressOf()
  await app.listen({ host, port })
  startWebhook(app, process.env.WEBHOOK_URL ?? `${url}/webhook-receiver`, secret)
}
