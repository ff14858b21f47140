// Example server: the order routes with Swagger UI at /docs. Run it with `npm start`.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import closeWithGrace from 'close-with-grace'
import { pathToFileURL } from 'node:url'
import orderPlugin, { defaultWorkflow, type WorkflowGuards } from '../lib/index.js'
import { createExampleStorage, type ExampleStorage } from './storage.js'

/** Where the example listens: HOST and PORT, else 127.0.0.1:3000. */
export function addressOf (env: NodeJS.ProcessEnv = process.env) {
  const host = env.HOST ?? '127.0.0.1'
  const port = Number(env.PORT ?? 3000)
  return { host, port, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}` }
}

/** Once listening, logs where to look: the docs, as the server's root answers 404. */
export function logDocsAddress (app: FastifyInstance): void {
  app.addHook('onListen', async () => {
    app.log.info(`Swagger UI at ${app.listeningOrigin}/docs, the OpenAPI document at ${app.listeningOrigin}/docs/json`)
  })
}

/**
 * The shop's rule on moves, decided on the order as stored before anything is written: an order ships
 * only once its payment is recorded, as a paid move whose reason carries the payment's reference.
 */
export const guards: WorkflowGuards<typeof defaultWorkflow> = {
  shipped: ({ order }) => order.statusHistory.some(({ status, reason }) => status === 'paid' && reason !== undefined) ||
    'record the payment first: move the order to paid with its payment reference as the reason'
}

/** `storage` defaults to the example's database (DATABASE_URL, or PGlite in ./data); tests pass their own. */
export async function buildServer (options: FastifyServerOptions = { logger: true }, exampleStorage?: ExampleStorage, env = process.env) {
  const app = Fastify(options)

  // @fastify/swagger must see the routes, so it is registered before the plugin. Naming components
  // after their $id shows the shared schemas as "Order" and "OrderError" rather than "def-0".
  // The server's URL tells generated clients where to send their requests.
  await app.register(swagger, {
    openapi: { info: { title: 'fastify-order example', version: '0.1.0' }, servers: [{ url: addressOf(env).url }] },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) }
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  logDocsAddress(app)

  const { storage, close } = exampleStorage ?? await createExampleStorage(env, app.log)
  app.addHook('onClose', close)
  await app.register(orderPlugin, { storage, workflow: { ...defaultWorkflow, guards } })
  return app
}

// Listen only when run as a program, so tests can build the server and inject requests.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const app = await buildServer()
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })
  const { host, port } = addressOf()
  await app.listen({ host, port })
}
