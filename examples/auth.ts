// Example: orders behind JWT authentication, scoped per customer, rate limited. `npm run example:auth`.
import Fastify, { type FastifyRequest, type FastifyServerOptions } from 'fastify'
import jwt from '@fastify/jwt'
import rateLimit from '@fastify/rate-limit'
import closeWithGrace from 'close-with-grace'
import { pathToFileURL } from 'node:url'
import orderPlugin, { type Authorize } from '../lib/index.js'
import { createExampleStorage, type ExampleStorage } from './storage.js'

// What our tokens carry: the customer in `sub` (or a `customerId` claim), or `admin: true` for staff.
declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: { sub?: string, customerId?: string, admin?: boolean }
  }
}

/** Staff see everything; a customer sees only their own orders and may only cancel them. */
const authorize: Authorize = (request, operation) => {
  const { admin, customerId, sub } = request.user as { sub?: string, customerId?: string, admin?: boolean }
  if (admin === true) return true
  const customer = customerId ?? sub
  if (customer === undefined) return false
  if (operation === 'updateOrderStatus' && (request.body as { status?: unknown }).status !== 'cancelled') return false
  return { customerId: customer }
}

export async function buildServer (options: FastifyServerOptions = { logger: true }, secret = process.env.JWT_SECRET, exampleStorage?: ExampleStorage) {
  const app = Fastify(options)
  await app.register(jwt, { secret: secret ?? 'development secret: set JWT_SECRET' })
  // global: false adds no limit to other routes; app.rateLimit() makes the hook the order routes use.
  await app.register(rateLimit, { global: false })

  const { storage, close } = exampleStorage ?? await createExampleStorage()
  app.addHook('onClose', close)
  await app.register(orderPlugin, {
    storage,
    authorize,
    hooks: {
      onRequest: [
        app.rateLimit({ max: 100, timeWindow: '1 minute' }),
        async (request: FastifyRequest) => { await request.jwtVerify() } // 401 without a valid token
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
      admin: app.jwt.sign({ sub: 'staff_1', admin: true })
    }, 'JWT_SECRET is not set: using a development secret; tokens to try')
  }
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' })
}
