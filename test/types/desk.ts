// Type tests of the desk option: true or { path, title, hooks }, hooks typed as Fastify's. Compile-time assertions (expect-type), never run.
// Each `// @ts-expect-error` covers the one line after it: that line must not compile, for the reason given.
import Fastify from 'fastify'
import { expectTypeOf } from 'expect-type'
import orderPlugin, { type DeskOptions, type OrderPluginOptions } from '../../lib/index.js'

const app = Fastify()

expectTypeOf<OrderPluginOptions['desk']>().toEqualTypeOf<boolean | DeskOptions | undefined>()
await app.register(orderPlugin, { desk: true })
await app.register(orderPlugin, {
  desk: {
    path: '/staff',
    title: 'Shop',
    hooks: {
      onRequest: async (request, reply) => {
        expectTypeOf(request.headers.cookie).toEqualTypeOf<string | undefined>()
        if (request.headers.cookie === undefined) await reply.code(401).send()
      }
    }
  }
})
// @ts-expect-error a misspelt option of the desk does not compile
await app.register(orderPlugin, { desk: { titel: 'Shop' } })
// @ts-expect-error the path is a string
await app.register(orderPlugin, { desk: { path: 7 } })
