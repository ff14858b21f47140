// Example: the order server delivering every event as a signed webhook, many at once, retried on the
// Standard Webhooks schedule and then kept as a dead letter; a receiver that verifies the signature
// with the standardwebhooks package; and an operator's view of the dead letters. `npm run example:webhooks`.
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import closeWithGrace from 'close-with-grace'
import { Webhook } from 'standardwebhooks'
import type { RetryPolicy } from '../lib/index.js'
import { webhook, webhookRetrySchedule } from '../lib/subscriptions/webhooks.js'
import { addressOf, buildServer, exampleLogger } from './server.js'
import type { ExampleStorage } from './storage.js'

/** The subscription that delivers the webhooks. */
const SUBSCRIPTION = 'webhook'

/**
 * The example server plus `POST /webhook-receiver`, a receiver as another service would write it: it
 * verifies each delivery with `secret` (a 401 otherwise), logs it and keeps its id. And the operator's
 * view: `GET /webhook-dead-letters` lists the events the receiver refused for good (`?after=<event id>`
 * for the next page), `POST /webhook-dead-letters/redeliver` sends them all again. Put those two behind
 * your own admin authentication.
 */
export async function buildWebhookServer (secret: string, options: FastifyServerOptions = { logger: exampleLogger() }, exampleStorage?: ExampleStorage) {
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
  app.get<{ Querystring: { after?: string } }>('/webhook-dead-letters', async request =>
    app.orders.deadLetters(SUBSCRIPTION, { limit: 100, ...(request.query.after === undefined ? {} : { after: request.query.after }) }))
  app.post('/webhook-dead-letters/redeliver', async () => app.orders.redeliver(SUBSCRIPTION))
  return { app, received }
}

/**
 * Delivers every event, from the oldest, to `url`, as the subscription named `webhook`: up to 16 at once
 * (one order's events one after the other), each retried on the Standard Webhooks schedule (5 s to
 * 10 h, about 27.6 hours in all) and then set aside as a dead letter.
 */
export function startWebhook (app: FastifyInstance, url: string, secret: string, retry: RetryPolicy = { schedule: webhookRetrySchedule }): void {
  app.orders.subscribe(SUBSCRIPTION, webhook({ url, secret }), { from: 'start', concurrency: 16, retry })
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
