// OpenAPI: with @fastify/swagger registered first, the three operations are documented in full.
import Fastify from 'fastify'
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import t, { type Test } from 'tap'
import orderPlugin from '../lib/index.js'

interface Operation {
  operationId: string
  summary: string
  description: string
  tags: string[]
  parameters?: Array<{ in: string, name: string }>
  requestBody: { content: { 'application/json': { schema: { properties: Record<string, unknown> } } } }
  responses: Record<string, { description: string, content: { 'application/json': { schema: Record<string, unknown> } } }>
}

interface Document {
  paths: Record<string, { post: Operation }>
  components: { schemas: Record<string, { title?: string, properties: Record<string, unknown> }> }
}

async function openapiOf (t: Test, refResolver?: FastifyDynamicSwaggerOptions['refResolver']): Promise<Document> {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(swagger, { openapi: { info: { title: 'orders', version: '1.0.0' } }, ...(refResolver && { refResolver }) })
  await app.register(orderPlugin, { prefix: '/api' })
  await app.ready()
  return app.swagger() as unknown as Document
}

// Names components after the schemas' $id, as the README recommends.
const byId: FastifyDynamicSwaggerOptions['refResolver'] = {
  buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`)
}

const documented = {
  getOrderList: { success: '200', errors: ['400', '403', '413', '415', '503'] },
  createOrder: { success: '201', errors: ['400', '403', '409', '413', '415', '422', '503'] },
  updateOrderStatus: { success: '200', errors: ['400', '403', '404', '409', '413', '415', '503'] }
}

t.test('the three operations appear with summary, description, tags, request body and every response', async t => {
  const spec = await openapiOf(t, byId)
  t.same(Object.keys(spec.paths).sort(), ['/api/order/createOrder', '/api/order/getOrderList', '/api/order/updateOrderStatus'])
  for (const [operationId, { success, errors }] of Object.entries(documented)) {
    const operation = spec.paths[`/api/order/${operationId}`]!.post
    t.equal(operation.operationId, operationId)
    t.ok(operation.summary, `${operationId} has a summary`)
    t.ok(operation.description, `${operationId} has a description`)
    t.same(operation.tags, ['orders'])
    t.ok(operation.requestBody.content['application/json'].schema.properties, `${operationId} documents its body`)
    t.same(Object.keys(operation.responses).sort(), [success, ...errors].sort())
    for (const status of errors) {
      const response = operation.responses[status]!
      t.same(response.content['application/json'].schema, { $ref: '#/components/schemas/OrderError' }, `${operationId} ${status} is an OrderError`)
      t.match(response.description, /^[A-Z_]+: /, `${operationId} ${status} names its error codes`)
    }
    t.not(operation.responses[success]!.description, 'Default Response', `${operationId} ${success} is described`)
  }
})

t.test('Order and OrderError are shared components, referenced rather than copied', async t => {
  const spec = await openapiOf(t, byId)
  t.same(Object.keys(spec.components.schemas).sort(), ['Order', 'OrderError'])
  t.ok(spec.components.schemas.Order!.properties.statusHistory)
  const paths = spec.paths
  t.same(paths['/api/order/createOrder']!.post.responses['201']!.content['application/json'].schema, { $ref: '#/components/schemas/Order' })
  t.same(paths['/api/order/updateOrderStatus']!.post.responses['200']!.content['application/json'].schema, { $ref: '#/components/schemas/Order' })
  t.match(paths['/api/order/getOrderList']!.post.responses['200']!.content['application/json'].schema, {
    properties: { items: { items: { $ref: '#/components/schemas/Order' } } }
  })
  t.notMatch(JSON.stringify(paths), /"statusHistory"/, 'no route carries a copy of the Order schema')
})

t.test('with the default ref resolver the shared schemas still appear exactly once', async t => {
  const spec = await openapiOf(t)
  const titles = Object.values(spec.components.schemas).map(schema => schema.title).sort()
  t.same(titles, ['Order', 'OrderError'])
})

t.test('createOrder documents the Idempotency-Key header', async t => {
  const spec = await openapiOf(t, byId)
  t.match(spec.paths['/api/order/createOrder']!.post.parameters, [{ in: 'header', name: 'idempotency-key' }])
})
