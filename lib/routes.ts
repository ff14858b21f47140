// The three POST routes: request → authorize → order module → reply, nothing else.
import type {
  FastifyInstance, FastifyRequest, FastifySchemaCompiler, onRequestHookHandler, preHandlerHookHandler
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodes } from 'fastify'
import { codes } from './errors.js'
import { openApiSchemaOf } from './openapi.js'
import type { OrderSchemas } from './schemas.js'
import type { OrderModule } from './module.js'
import type { OrderScope } from './scope.js'

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
  module: OrderModule
  schemas: OrderSchemas
  bodyLimit: number
  authorize?: Authorize
  hooks?: OrderHooks
}

const accept = () => true

export async function orderRoutes (fastify: FastifyInstance, options: OrderRoutesOptions): Promise<void> {
  const { module, schemas, bodyLimit, authorize, hooks } = options
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.addSchema(schemas.Order)
  app.addSchema(schemas.OrderError)

  /**
   * A route's body: `documented` is the form OpenAPI 3.0 and 3.1 both accept, made from the schema once
   * so the two cannot drift; `validatorCompiler` checks requests against the schema itself, with our own
   * strict validator whatever ajv options the host gave Fastify. The Idempotency-Key header schema is
   * there for OpenAPI; the rules check the header, so it answers with its own code.
   */
  function bodyOf (schema: object): { documented: object, validatorCompiler: FastifySchemaCompiler<unknown> } {
    const validate = module.validatorOf(schema)
    return {
      documented: openApiSchemaOf(schema),
      validatorCompiler: ({ httpPart }) => httpPart === 'body' ? validate : accept
    }
  }

  // The routes read JSON only. An empty body is a missing body whatever its Content-Type
  // (getOrderList reads it as {}); any other body that is not JSON is 415.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined)
    else parseJson(request, body as string, done)
  })
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) done(null, undefined)
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type'] ?? '(no Content-Type)'))
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

  // Each status documents its codes in OpenAPI; the shared schemas appear there once, as components.
  const error = (description: string) => ({ $ref: 'OrderError#', description })
  const order = (description: string) => ({ $ref: 'Order#', description })
  const invalid = 'FST_ERR_VALIDATION: the body does not match the schema'
  const forbidden = error('ORDER_FORBIDDEN: `authorize` denied the operation')
  const tooLarge = error('FST_ERR_CTP_BODY_TOO_LARGE: the body is above `bodyLimit`')
  const notJson = error('FST_ERR_CTP_INVALID_MEDIA_TYPE: a body that is not application/json')
  const unavailable = error('ORDER_STORAGE_UNAVAILABLE: the storage failed; retry later')
  const common = { bodyLimit, onRequest: hooks?.onRequest, preHandler: hooks?.preHandler }
  const listBody = bodyOf(schemas.ListOrdersBody)
  const createBody = bodyOf(schemas.CreateOrderBody)
  const updateBody = bodyOf(schemas.UpdateOrderStatusBody)
  const tags = ['orders']

  const getOrderList = {
    operationId: 'getOrderList',
    tags,
    summary: 'List orders',
    description: 'A keyset page of orders, newest first unless `order` is "asc". Follow `nextCursor` with the same filter and order for the next page.',
    body: listBody.documented as typeof schemas.ListOrdersBody,
    response: {
      200: { ...schemas.OrderPage, description: 'A page of orders and the cursor of the next one' },
      400: error(`${invalid}; ORDER_INVALID_CURSOR: the cursor is malformed or was issued for another filter or order`),
      403: forbidden,
      413: tooLarge,
      415: notJson,
      503: unavailable
    }
  }
  app.post('/order/getOrderList', {
    ...common,
    schema: getOrderList,
    validatorCompiler: listBody.validatorCompiler,
    // No body (or an empty one) reads the first page; a JSON null is a body, and not an object.
    // A callback hook: an async one costs a promise per request.
    preValidation: (request, _reply, done) => {
      if (request.body === undefined) request.body = {}
      done()
    }
  }, async (request) => {
    const scope = authorize === undefined ? undefined : await scopeOf(request, 'getOrderList')
    return module.listOrders(request.body, scope)
  })

  const createOrder = {
    operationId: 'createOrder',
    tags,
    summary: 'Create an order',
    description: 'Creates an order in the workflow\'s initial status; the server computes id, total, version and timestamps. Send an `Idempotency-Key` header to make retries safe.',
    headers: schemas.IdempotencyHeaders,
    body: createBody.documented as typeof schemas.CreateOrderBody,
    response: {
      201: order('The new order, or the first one created with this Idempotency-Key (header idempotent-replayed: true)'),
      400: error(`${invalid}; ORDER_TOTAL_TOO_LARGE: the total is above Number.MAX_SAFE_INTEGER; ORDER_INVALID_IDEMPOTENCY_KEY: the header is not 1 to 255 visible ASCII characters`),
      403: error('ORDER_FORBIDDEN: `authorize` denied the operation, or the order is for another customer than the scope'),
      409: error('ORDER_IDEMPOTENCY_IN_PROGRESS: a request with the same Idempotency-Key is still running'),
      413: tooLarge,
      415: notJson,
      422: error('ORDER_IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used with another body'),
      503: unavailable
    }
  }
  app.post('/order/createOrder', { ...common, schema: createOrder, validatorCompiler: createBody.validatorCompiler }, async (request, reply) => {
    const scope = authorize === undefined ? undefined : await scopeOf(request, 'createOrder')
    const result = await module.createOrder(request.body, scope, request.headers['idempotency-key'])
    if (result.replayed) reply.header('idempotent-replayed', 'true')
    return reply.code(201).send(result.order)
  })

  const updateOrderStatus = {
    operationId: 'updateOrderStatus',
    tags,
    summary: 'Move an order to another status',
    description: 'Applies one workflow move. Moving to the current status is a no-op; `expectedVersion` makes the move conditional.',
    body: updateBody.documented as typeof schemas.UpdateOrderStatusBody,
    response: {
      200: order('The order after the move, or as it was when it already had this status'),
      400: error(`${invalid} (including a status the workflow does not have)`),
      403: forbidden,
      404: error('ORDER_NOT_FOUND: no such order in the caller\'s scope'),
      409: error('ORDER_INVALID_TRANSITION: the workflow forbids the move; ORDER_VERSION_CONFLICT: `expectedVersion` is not the stored version'),
      413: tooLarge,
      415: notJson,
      503: unavailable
    }
  }
  app.post('/order/updateOrderStatus', { ...common, schema: updateOrderStatus, validatorCompiler: updateBody.validatorCompiler }, async (request) => {
    const scope = authorize === undefined ? undefined : await scopeOf(request, 'updateOrderStatus')
    return module.updateOrderStatus(request.body, scope)
  })
}
