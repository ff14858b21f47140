// The three POST routes: request → authorize → service → reply, nothing else.
import type {
  FastifyInstance, FastifyRequest, onRequestHookHandler, preHandlerHookHandler
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { codes } from './errors.js'
import type { OrderSchemas } from './schemas.js'
import type { OrderOperations, OrderScope } from './service.js'

export type OrderOperation = 'getOrderList' | 'createOrder' | 'updateOrderStatus'

/**
 * Decides whether a request may run an operation: `false` denies (403 ORDER_FORBIDDEN),
 * `true` or nothing allows everything, a scope allows only that customer's orders.
 */
export type Authorize = (request: FastifyRequest, operation: OrderOperation) =>
  OrderScope | boolean | undefined | void | Promise<OrderScope | boolean | undefined | void>

/** Hooks added to the three routes only, e.g. authentication or rate limiting. */
export interface OrderHooks {
  onRequest?: onRequestHookHandler | onRequestHookHandler[]
  preHandler?: preHandlerHookHandler | preHandlerHookHandler[]
}

export interface OrderRoutesOptions {
  operations: OrderOperations
  schemas: OrderSchemas
  bodyLimit: number
  authorize?: Authorize
  hooks?: OrderHooks
}

const accept = () => true

export async function orderRoutes (fastify: FastifyInstance, options: OrderRoutesOptions): Promise<void> {
  const { operations, schemas, bodyLimit, authorize, hooks } = options
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.addSchema(schemas.Order)
  app.addSchema(schemas.OrderError)

  // Our own strict validator, whatever ajv options the host gave Fastify. The Idempotency-Key
  // header schema is there for OpenAPI; the service checks it, so it answers with its own code.
  app.setValidatorCompiler(({ schema, httpPart }) => httpPart === 'headers' ? accept : operations.validatorOf(schema))

  // An empty JSON body is a missing body (getOrderList treats it as {}), not a parse error.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined)
    else parseJson(request, body as string, done)
  })

  async function scopeOf (request: FastifyRequest, operation: OrderOperation): Promise<OrderScope | undefined> {
    const decision = await authorize!(request, operation)
    if (decision === false) throw new codes.ORDER_FORBIDDEN(operation)
    if (decision === true || decision === undefined || decision === null) return undefined
    if (typeof decision !== 'object') {
      throw new TypeError(`fastify-order: authorize returned ${typeof decision}; return false, true, nothing or a scope { customerId }`)
    }
    return decision
  }

  const error = { $ref: 'OrderError#' }
  const order = { $ref: 'Order#' }
  const common = { bodyLimit, onRequest: hooks?.onRequest, preHandler: hooks?.preHandler }
  const tags = ['orders']

  const getOrderList = {
    operationId: 'getOrderList',
    tags,
    summary: 'List orders',
    description: 'A keyset page of orders, newest first unless `order` is "asc". Follow `nextCursor` with the same filter and order for the next page.',
    body: schemas.ListOrdersBody,
    response: { 200: schemas.OrderPage, 400: error, 403: error, 413: error, 503: error }
  }
  app.post('/order/getOrderList', {
    ...common,
    schema: getOrderList,
    // No body at all reads the first page. A callback hook: an async one costs a promise per request.
    preValidation: (request, _reply, done) => {
      request.body ??= {}
      done()
    }
  }, async (request) => {
    const scope = authorize === undefined ? undefined : await scopeOf(request, 'getOrderList')
    return operations.listOrders(request.body, scope)
  })

  const createOrder = {
    operationId: 'createOrder',
    tags,
    summary: 'Create an order',
    description: 'Creates an order in the workflow\'s initial status; the server computes id, total, version and timestamps. Send an `Idempotency-Key` header to make retries safe.',
    headers: schemas.IdempotencyHeaders,
    body: schemas.CreateOrderBody,
    response: { 201: order, 400: error, 403: error, 409: error, 413: error, 422: error, 503: error }
  }
  app.post('/order/createOrder', { ...common, schema: createOrder }, async (request, reply) => {
    const scope = authorize === undefined ? undefined : await scopeOf(request, 'createOrder')
    const result = await operations.createOrder(request.body, scope, request.headers['idempotency-key'])
    if (result.replayed) reply.header('idempotent-replayed', 'true')
    return reply.code(201).send(result.order)
  })

  const updateOrderStatus = {
    operationId: 'updateOrderStatus',
    tags,
    summary: 'Move an order to another status',
    description: 'Applies one workflow move. Moving to the current status is a no-op; `expectedVersion` makes the move conditional.',
    body: schemas.UpdateOrderStatusBody,
    response: { 200: order, 400: error, 403: error, 404: error, 409: error, 413: error, 503: error }
  }
  app.post('/order/updateOrderStatus', { ...common, schema: updateOrderStatus }, async (request) => {
    const scope = authorize === undefined ? undefined : await scopeOf(request, 'updateOrderStatus')
    return operations.updateOrderStatus(request.body, scope)
  })
}
