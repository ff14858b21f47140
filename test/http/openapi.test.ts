// OpenAPI: with @fastify/swagger registered first, the three operations are documented in full.
import Fastify from 'fastify'
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { Ajv } from 'ajv'
import ajvFormats from 'ajv-formats'
import t, { type Test } from 'tap'
import orderPlugin, { type OrderPluginOptions } from '../../lib/index.js'
import { buildServer } from '../../examples/server.js'
import { Gift, Shipping } from '../custom-field-schemas.js'
import { exampleMemoryStorage } from '../helper.js'

interface Operation {
  operationId: string
  summary: string
  description: string
  tags: string[]
  parameters?: Array<{ in: string, name: string }>
  requestBody: { content: { 'application/json': { schema: { properties: Record<string, unknown> } } } }
  responses: Record<string, { description: string, content: { 'application/json': { schema: Record<string, unknown>, example?: unknown, examples?: Record<string, { value: unknown }> } } }>
}

interface Document {
  paths: Record<string, { post: Operation }>
  components: { schemas: Record<string, { title?: string, properties: Record<string, unknown> }> }
}

async function openapiOf (t: Test, refResolver?: FastifyDynamicSwaggerOptions['refResolver']): Promise<Document> {
  const app = await appOf(t, { prefix: '/api' }, refResolver)
  return app.swagger() as unknown as Document
}

async function appOf (t: Test, options: OrderPluginOptions, refResolver?: FastifyDynamicSwaggerOptions['refResolver']) {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(swagger, { openapi: { info: { title: 'orders', version: '1.0.0' } }, ...(refResolver && { refResolver }) })
  await app.register(orderPlugin, options)
  await app.ready()
  return app
}

type Send = (operation: string, payload: unknown) => PromiseLike<{ statusCode: number, json: () => { id: string } }>

/**
 * Swagger UI's "Try it out" body of each route: the example @fastify/swagger put on the request's
 * media type, sent in order (the move's example names the order the create example just made).
 */
async function tryItOut (t: Test, document: Document, send: Send, expected: Record<string, number> = { createOrder: 201, getOrderList: 200, updateOrderStatus: 200 }) {
  const example = (operation: string) => (document.paths[`/order/${operation}`]!.post.requestBody.content['application/json'] as { example?: Record<string, unknown> }).example
  let created: string | undefined
  for (const [operation, status] of Object.entries(expected)) {
    const body = example(operation)
    if (!t.ok(body, `${operation} has an example body`)) continue
    const response = await send(operation, operation === 'updateOrderStatus' && created !== undefined ? { ...body, id: created } : body)
    t.equal(response.statusCode, status, `${operation}: ${JSON.stringify(response.json())}`)
    if (operation === 'createOrder') created = response.json().id
  }
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
  const schemas = Object.values(paths).flatMap(path => Object.values(path.post.responses).map(response => response.content['application/json'].schema))
  t.notMatch(JSON.stringify(schemas), /"statusHistory"/, 'no route carries a copy of the Order schema')
})

t.test('every documented answer has an example that its schema accepts: an order, a page, and each error with its status and code', async t => {
  const spec = await openapiOf(t, byId)
  // The document's own schemas, as a client generated from it reads them (OpenAPI 3.0: nullable).
  const ajv = new Ajv({ strict: false, allErrors: true })
  ajvFormats.default(ajv)
  ajv.addSchema({ $id: 'document', components: spec.components })
  const operations = Object.entries(spec.paths).map(([path, { post }]) => [path, post] as const)
  t.equal(operations.length, 3)
  for (const [path, { operationId, responses }] of operations) {
    t.same(Object.keys(responses), [documented[operationId as keyof typeof documented].success, ...documented[operationId as keyof typeof documented].errors], path)
    for (const [status, { content }] of Object.entries(responses)) {
      const media = content['application/json']
      const examples = media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map(({ value }) => value)
      if (!t.ok(examples.length > 0, `${operationId} ${status} has an example`)) continue
      const validate = ajv.compile(JSON.parse(JSON.stringify(media.schema).replaceAll('"#/components/', '"document#/components/')))
      for (const example of examples) {
        t.ok(validate(example), `${operationId} ${status}: ${JSON.stringify(example)} ${ajv.errorsText(validate.errors)}`)
        if (status.startsWith('2')) continue
        t.match(example, { statusCode: Number(status), code: /^(ORDER|FST)_[A-Z_]+$/, error: String, message: String }, `${operationId} ${status} is sent with its status`)
        t.notMatch(JSON.stringify(example), /"string"|"statusCode":0/, 'no made-up values')
      }
    }
  }
  const move = spec.paths['/api/order/updateOrderStatus']!.post.responses
  const codes = (status: string) => Object.keys(move[status]!.content['application/json'].examples ?? {})
  t.same(codes('409'), ['ORDER_INVALID_TRANSITION', 'ORDER_TRANSITION_REFUSED', 'ORDER_VERSION_CONFLICT'], 'each code a move may answer 409 with')
  t.same(codes('404'), ['ORDER_NOT_FOUND'])
  const order = move['200']!.content['application/json'].example
  t.match(order, { customerId: 'cus_42', currency: 'EUR', status: 'paid', version: 2, total: 2500, items: [{ sku: 'A-1', quantity: 2, unitPrice: 1250 }] }, 'the order looks like one the create example makes')
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

t.test('Swagger UI\'s "Try it out" succeeds on every route of the example server: each body\'s example is valid', async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const document = (await app.inject('/docs/json')).json() as Document
  await tryItOut(t, document, (operation, payload) => app.inject({ method: 'POST', url: `/order/${operation}`, payload: payload as object }))
  t.same((await app.orders.list()).items.map(order => [order.status, order.version]), [['paid', 2]], 'the example order was made, then moved')
})

t.test('the documented orders keep within the workflow: its own statuses, and no move from an initial status that is final', async t => {
  for (const [workflow, status, history] of [
    [{ initial: 'new', transitions: { new: ['done'], done: [] } }, 'done', ['new', 'done']],
    [{ initial: 'only', transitions: { only: [] } }, 'only', ['only']]
  ] as const) {
    const spec = (await appOf(t, { workflow })).swagger() as unknown as Document
    const moved = spec.paths['/order/updateOrderStatus']!.post.responses['200']!.content['application/json'].example as { status: string, version: number, statusHistory: Array<{ status: string }> }
    t.equal(moved.status, status, workflow.initial)
    t.equal(moved.version, history.length)
    t.same(moved.statusHistory.map(({ status }) => status), history)
  }
})

t.test('the examples keep within the options: a custom workflow, a small page, custom fields', async t => {
  const workflow = { initial: 'new', transitions: { new: ['done'], done: [] } }
  for (const [name, options, expected] of [
    ['a custom workflow and maxPageSize', { workflow, maxPageSize: 5 }, undefined],
    ['optional custom fields', { customFields: { item: Gift } }, undefined],
    // Values only the host knows: no create example (Swagger UI fills that body from the schema); the
    // move's example is valid, its order unknown.
    ['required custom fields', { customFields: { order: Shipping } }, { getOrderList: 200, updateOrderStatus: 404 }]
  ] as const) {
    const app = await appOf(t, options)
    const document = app.swagger() as unknown as Document
    await t.test(name, async t => tryItOut(t, document, (operation, payload) => app.inject({ method: 'POST', url: `/order/${operation}`, payload: payload as object }), expected))
    if (expected !== undefined) t.notOk('example' in document.paths['/order/createOrder']!.post.requestBody.content['application/json'], `${name}: createOrder has no example`)
  }
})

t.test('with changes and their route, changeOrder is documented with its body, its 409 ORDER_CHANGE_REFUSED and the Order with its ledger', async t => {
  const app = await appOf(t, { changes: { route: true } }, byId)
  const spec = app.swagger() as unknown as Document
  const operation = spec.paths['/order/changeOrder']!.post
  t.equal(operation.operationId, 'changeOrder')
  t.match(operation.description, 'Line actions are allowed in pending or paid; returnItem in shipped or delivered')
  t.same(Object.keys(operation.responses).sort(), ['200', '400', '403', '404', '409', '413', '415', '422', '503'])
  t.match(operation.responses['409']!.description, /ORDER_CHANGE_REFUSED: .*ORDER_VERSION_CONFLICT/)
  t.same(operation.responses['200']!.content['application/json'].schema, { $ref: '#/components/schemas/Order' })
  t.match(operation.parameters, [{ in: 'header', name: 'idempotency-key' }])
  const actions = operation.requestBody.content['application/json'].schema.properties.actions as { items: { anyOf?: unknown[], oneOf?: unknown[] } }
  t.equal((actions.items.oneOf ?? actions.items.anyOf)!.length, 7, 'the seven actions')
  t.ok(spec.components.schemas.Order!.properties.balance, 'the Order has its ledger')
  const list = spec.paths['/order/getOrderList']!.post.requestBody.content['application/json'].schema.properties.filter as { properties: object }
  t.ok('balance' in list.properties, 'filter.balance is documented')
})

t.test('with changes off, or on without the route, no operation, shape or filter is new', async t => {
  const off = await openapiOf(t, byId)
  const on = (await appOf(t, { prefix: '/api', changes: true }, byId)).swagger() as unknown as Document
  t.same(Object.keys(on.paths).sort(), Object.keys(off.paths).sort(), 'no changeOrder without changes.route')
  t.notOk('balance' in off.components.schemas.Order!.properties, 'no ledger with changes off')
  t.notMatch(JSON.stringify(off), /changeOrder|balance|payments/, 'nothing of changes in the document')
})

t.test('with the stream on, GET /order/events is documented as text/event-stream with its 403 and 503 ORDER_STREAM_FULL', async t => {
  const app = await appOf(t, { stream: true, prefix: '/api' })
  const document = app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }
  const operation = document.paths['/api/order/events']!.get!
  t.equal(operation.operationId, 'streamEvents')
  t.same(operation.tags, ['orders'])
  t.match(operation.description, /Last-Event-ID/)
  t.same(operation.parameters?.map(({ in: where, name }) => `${where} ${name}`).sort(), ['header last-event-id', 'query after'])
  t.same(Object.keys(operation.responses['200']!.content), ['text/event-stream'])
  t.same(Object.keys(operation.responses).sort(), ['200', '403', '503'])
  const examples = Object.values((operation.responses['503']!.content['application/json'] as { examples: Record<string, { value: { code: string } }> }).examples)
  t.same(examples.map(example => example.value.code), ['ORDER_STREAM_FULL'])
  const without = await appOf(t, { prefix: '/api' })
  t.notOk((without.swagger() as unknown as Document).paths['/api/order/events'], 'no stream, no operation')
})
