// Example: orders behind JWT authentication, scoped per customer or per store, signed by staff, rate limited. `npm run example:auth`.
import Fastify, { type FastifyRequest, type FastifyServerOptions } from 'fastify'
import jwt from '@fastify/jwt'
import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import closeWithGrace from 'close-with-grace'
import { pathToFileURL } from 'node:url'
import orderPlugin, { type Authorize } from '../lib/index.js'
import { addressOf, documentServers, exampleLogger, greet, version } from './server.js'
import { createExampleStorage, type ExampleStorage } from './storage.js'

// What our tokens carry: the customer in `sub` (or a `customerId` claim); for staff, their id in `sub`
// and `admin: true` (every store) or `store` (the one store they work for).
declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: { sub?: string, customerId?: string, admin?: boolean, store?: string }
  }
}

/**
 * Admins see everything; staff of a store see, move and change that store's orders only; a customer sees
 * only their own orders, may cancel them, and may cancel a line before shipping (changes.customerActions
 * below; money and prices are the shop's). Every change a staff member makes carries their id (`by`).
 */
const authorize: Authorize = (request, operation) => {
  const { admin, customerId, sub, store } = request.user as { sub?: string, customerId?: string, admin?: boolean, store?: string }
  if (admin === true) return sub === undefined ? true : { actor: sub }
  if (store !== undefined) return sub === undefined ? false : { store, actor: sub }
  const customer = customerId ?? sub
  if (customer === undefined) return false
  if (operation === 'updateOrderStatus' && (request.body as { status?: unknown }).status !== 'cancelled') return false
  return { customerId: customer }
}

// 401 without a valid token.
async function authenticate (request: FastifyRequest) {
  await request.jwtVerify()
}

export async function buildServer (options: FastifyServerOptions = { logger: exampleLogger() }, secret = process.env.JWT_SECRET, exampleStorage?: ExampleStorage, env = process.env) {
  const app = Fastify(options)
  await app.register(jwt, { secret: secret ?? 'development secret: set JWT_SECRET' })
  // global: false adds no limit to other routes; app.rateLimit() makes the hook the order routes use.
  await app.register(rateLimit, { global: false })

  // The document names the server and the bearer scheme; every route that runs `authenticate`
  // requires it, so generated clients know where to send requests and how to authenticate.
  await app.register(swagger, {
    openapi: {
      info: { title: 'fastify-order example with JWT', version },
      servers: documentServers,
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } }
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => ({
      url,
      schema: [route.onRequest].flat().includes(authenticate) ? { ...schema, security: [{ bearerAuth: [] }] } : schema
    })
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  greet(app)

  const { storage, close } = exampleStorage ?? await createExampleStorage(env, app.log)
  app.addHook('onClose', close)
  await app.register(orderPlugin, {
    storage,
    authorize,
    // POST /order/changeOrder: staff use every action; customers only cancelItem, in the statuses before shipping.
    changes: { route: true, customerActions: ['cancelItem'] },
    hooks: {
      onRequest: [
        app.rateLimit({ max: 100, timeWindow: '1 minute' }),
        authenticate
      ]
    }
  })
  return app
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const app = await buildServer()
  if (process.env.JWT_SECRET === undefined) {
    // Without a secret of your own, print tokens to try the routes with.
    app.log.warn({
      customer: app.jwt.sign({ sub: 'cus_42' }),
      admin: app.jwt.sign({ sub: 'staff_1', admin: true }),
      euStaff: app.jwt.sign({ sub: 'staff_7', store: 'eu' })
    }, 'JWT_SECRET is not set: using a development secret; tokens to try')
  }
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })
  const { host, port } = addressOf()
  await app.listen({ host, port })
}
