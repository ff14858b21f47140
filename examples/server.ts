// Example server: the order routes, changeOrder included, with Swagger UI at /docs (and at /, which leads there). Run it with `npm start`.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import closeWithGrace from 'close-with-grace'
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { PinoPretty } from 'pino-pretty'
import orderPlugin, { defaultWorkflow, type WorkflowGuards } from '../lib/index.js'
import { createExampleStorage, type ExampleStorage } from './storage.js'

/** The package's version, which the document of each example carries. */
export const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

/** Where the example listens: HOST and PORT, else 127.0.0.1:3000. */
export function addressOf (env: NodeJS.ProcessEnv = process.env) {
  const host = env.HOST ?? '127.0.0.1'
  const port = Number(env.PORT ?? 3000)
  return { host, port, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}` }
}

/** The logger of a run: lines a person reads when `output` is a terminal, JSON lines for machines otherwise. */
export function exampleLogger (output: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout): FastifyServerOptions['logger'] {
  if (output.isTTY !== true) return { stream: output }
  // A request on one line each way: what was asked, and the status it got.
  return {
    stream: PinoPretty({
      destination: output,
      colorize: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname,reqId,req,res,responseTime',
      messageFormat: '{msg}{if req.method}: {req.method} {req.url}{end}{if res.statusCode}: {res.statusCode}{end}'
    })
  }
}

/**
 * The OpenAPI document's server: relative, so Swagger UI's "Try it out" and generated clients send their
 * requests to wherever the document was read (127.0.0.1, localhost, a LAN address, a proxy), never
 * across origins to an address built from HOST.
 */
export const documentServers = [{ url: '/', description: 'where this document is served' }]

/** `/` leads to Swagger UI, and once listening the log says where it is. */
export function greet (app: FastifyInstance): void {
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs'))
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
export async function buildServer (options: FastifyServerOptions = { logger: exampleLogger() }, exampleStorage?: ExampleStorage, env = process.env) {
  const app = Fastify(options)

  // @fastify/swagger must see the routes, so it is registered before the plugin. Naming components
  // after their $id shows the shared schemas as "Order" and "OrderError" rather than "def-0".
  await app.register(swagger, {
    openapi: { info: { title: 'fastify-order example', version }, servers: documentServers },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) }
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  greet(app)

  const { storage, close } = exampleStorage ?? await createExampleStorage(env, app.log)
  app.addHook('onClose', close)
  // Changes after placement with their route, POST /order/changeOrder: edits, returns, payments and refunds;
  // the desk, the staff page, at /order/desk.
  await app.register(orderPlugin, { storage, workflow: { ...defaultWorkflow, guards }, changes: { route: true }, desk: true })
  app.addHook('onListen', async () => { app.log.info(`the desk at ${app.listeningOrigin}/order/desk`) })
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
