// The POST routes (three, and changeOrder with changes: { route: true }): request → authorize → the order rules → reply, nothing else.
import type {
  FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaCompiler, onErrorHookHandler, onRequestHookHandler,
  onResponseHookHandler, preHandlerHookHandler, preValidationHookHandler
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorCodes } from 'fastify'
import fastJson, { type Schema as SerializedSchema } from 'fast-json-stringify'
import { codes } from '../errors.js'
import { IDEMPOTENCY_KEY_RULE } from '../orders/idempotency.js'
import { compiledOnce } from './compiled-once.js'
import { openApiSchemaOf } from './openapi.js'
import { errorExamples, orderExamples, type ErrorExamples } from './response-examples.js'
import { serializedFormOf } from './serialized-form.js'
import type { OrderRules } from '../orders/rules.js'
import type { Order, OrderSchemas } from './schemas.js'
import { checkScope, type OrderScope } from '../orders/scope.js'
import type { OperationSpanName, RouteSpan, Telemetry } from '../telemetry/telemetry.js'
import { movesDescription } from '../orders/workflow-diagram.js'
import { listed, type CompiledWorkflow } from '../orders/workflow.js'
import type { ChangesConfig } from '../orders/change-options.js'
import type { Validate } from './validation.js'
import type { FanOut } from '../feed/fan-out.js'
import { eventStreamRoute } from './event-stream.js'

export type OrderOperation = 'getOrderList' | 'createOrder' | 'updateOrderStatus' | 'changeOrder' | 'streamEvents'

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
  rules: OrderRules
  /** Its moves are documented on updateOrderStatus. */
  workflow: CompiledWorkflow
  /** The `changes` option: with `route`, changeOrder is served. */
  changes: ChangesConfig | undefined
  telemetry: Telemetry
  /** The strict validator of a schema, compiled once and shared with `app.orders`. */
  validatorOf: (schema: object) => Validate
  schemas: OrderSchemas
  bodyLimit: number
  authorize?: Authorize
  hooks?: OrderHooks
  /** With the `stream` option: the instance's feed reader, how many streams it serves, and the desk's hooks, which guard it too. */
  stream?: { fanOut: FanOut, maxClients: number, deskHooks?: OrderHooks | undefined } | undefined
}

const accept = () => true

/** The hooks of several options as one list, or undefined when there are none. */
function hooksOf (...given: unknown[]): unknown[] | undefined {
  const all = given.flat().filter(hook => hook !== undefined)
  return all.length === 0 ? undefined : all
}

// What Fastify answers JSON with.
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8'

// What OpenAPI shows of the three routes: summary, description, body and every response with its codes.
/** The request bodies as documented: the forms OpenAPI 3.0 and 3.1 both accept. */
interface DocumentedBodies {
  list: object
  create: object
  update: object
  change: object
}

/** The `schema` option of each route. The shared schemas appear in OpenAPI once, as components. */
function routeSchemasOf (schemas: OrderSchemas, bodies: DocumentedBodies, workflow: CompiledWorkflow, changesOn: boolean) {
  // Each answer carries examples, which Swagger UI shows rather than values made up from the schema.
  // In the media type, beside the $ref: @fastify/swagger drops what sits beside a $ref in a schema.
  const error = (description: string, examples: ErrorExamples) => ({ description, content: { 'application/json': { schema: { $ref: 'OrderError#' }, examples } } })
  const examples = orderExamples(workflow, changesOn)
  const order = (description: string, example: object) => ({ description, content: { 'application/json': { schema: { $ref: 'Order#' }, example } } })
  const invalid = 'FST_ERR_VALIDATION: the body does not match the schema'
  const validation = new codes.FST_ERR_VALIDATION('body must have required property \'customerId\'')
  const forbidden = (operation: OrderOperation) => error('ORDER_FORBIDDEN: `authorize` denied the operation', errorExamples(new codes.ORDER_FORBIDDEN(operation)))
  const tooLarge = error('FST_ERR_CTP_BODY_TOO_LARGE: the body is above `bodyLimit`', errorExamples(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()))
  const notJson = error('FST_ERR_CTP_INVALID_MEDIA_TYPE: a body that is not application/json', errorExamples(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE('text/plain')))
  const unavailable = error('ORDER_STORAGE_UNAVAILABLE: the storage failed; retry later', errorExamples(new codes.ORDER_STORAGE_UNAVAILABLE()))
  const { id } = examples.created
  const tags = ['orders']

  const getOrderList = {
    operationId: 'getOrderList',
    tags,
    summary: 'List orders',
    description: 'A keyset page of orders, newest first unless `order` is "asc". Follow `nextCursor` with the same filter and order for the next page.',
    body: bodies.list as typeof schemas.ListOrdersBody,
    response: {
      200: { ...schemas.OrderPage, description: 'A page of orders and the cursor of the next one', examples: [examples.page] },
      400: error(`${invalid}; ORDER_INVALID_CURSOR: the cursor is malformed or was issued for another filter or order`,
        errorExamples(new codes.FST_ERR_VALIDATION('body/order must be equal to one of the allowed values'), new codes.ORDER_INVALID_CURSOR())),
      403: forbidden('getOrderList'),
      413: tooLarge,
      415: notJson,
      503: unavailable
    }
  }

  const createOrder = {
    operationId: 'createOrder',
    tags,
    summary: 'Create an order',
    description: 'Creates an order in the workflow\'s initial status; the server computes id, number, total, version and timestamps. Send an `Idempotency-Key` header to make retries safe.',
    headers: schemas.IdempotencyHeaders,
    body: bodies.create as typeof schemas.CreateOrderBody,
    response: {
      201: order('The new order, or the first one created with this Idempotency-Key (header idempotent-replayed: true)', examples.created),
      400: error(`${invalid}; ORDER_TOTAL_TOO_LARGE: the total is above Number.MAX_SAFE_INTEGER; ORDER_INVALID_IDEMPOTENCY_KEY: the header is not ${IDEMPOTENCY_KEY_RULE}`,
        errorExamples(validation, new codes.ORDER_TOTAL_TOO_LARGE(Number.MAX_SAFE_INTEGER), new codes.ORDER_INVALID_IDEMPOTENCY_KEY(IDEMPOTENCY_KEY_RULE))),
      403: error('ORDER_FORBIDDEN: `authorize` denied the operation, or the order is for another customer than the scope', errorExamples(new codes.ORDER_FORBIDDEN('createOrder'))),
      409: error('ORDER_IDEMPOTENCY_IN_PROGRESS: a request with the same Idempotency-Key is still running; ORDER_REFERENCE_TAKEN: the customer already has an order with this reference',
        errorExamples(new codes.ORDER_IDEMPOTENCY_IN_PROGRESS(), new codes.ORDER_REFERENCE_TAKEN())),
      413: tooLarge,
      415: notJson,
      422: error('ORDER_IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used with another body', errorExamples(new codes.ORDER_IDEMPOTENCY_KEY_REUSED())),
      503: unavailable
    }
  }

  const updateOrderStatus = {
    operationId: 'updateOrderStatus',
    tags,
    summary: 'Move an order to another status',
    description: `Applies one workflow move. Moving to the current status is a no-op; \`expectedVersion\` makes the move conditional.\n\n${movesDescription(workflow)}`,
    body: bodies.update as typeof schemas.UpdateOrderStatusBody,
    response: {
      200: order('The order after the move, or as it was when it already had this status', examples.moved),
      400: error(`${invalid} (including a status the workflow does not have: the message lists the statuses)`, errorExamples(validation)),
      403: forbidden('updateOrderStatus'),
      404: error('ORDER_NOT_FOUND: no such order in the caller\'s scope', errorExamples(new codes.ORDER_NOT_FOUND(id))),
      409: error('ORDER_INVALID_TRANSITION: the workflow forbids the move (the message says where the order may go); ORDER_TRANSITION_REFUSED: a guard of the workflow refused the move for this order (the message is the guard\'s); ORDER_VERSION_CONFLICT: `expectedVersion` is not the stored version',
        errorExamples(
          new codes.ORDER_INVALID_TRANSITION(examples.moved.status, workflow.initial, workflow.whereFrom(examples.moved.status)),
          new codes.ORDER_TRANSITION_REFUSED('record the payment first'),
          new codes.ORDER_VERSION_CONFLICT(id, 1)
        )),
      413: tooLarge,
      415: notJson,
      503: unavailable
    }
  }

  const changeOrder = (changes: ChangesConfig) => ({
    operationId: 'changeOrder',
    tags,
    summary: 'Change an order after placement',
    description: 'Applies the actions in order, all or none: lines added, requantified, repriced, cancelled or returned, payments and refunds recorded. ' +
      '`preview: true` answers the order as the change would leave it and stores nothing. Send an `Idempotency-Key` header to make retries safe.\n\n' +
      `Line actions are allowed in ${listed(changes.lineEdits)}; returnItem in ${changes.returns.length === 0 ? 'no status' : listed(changes.returns)}; payments and refunds in every status.`,
    headers: schemas.IdempotencyHeaders,
    body: bodies.change as typeof schemas.ChangeOrderBody,
    response: {
      200: order('The order after the change (as it would be, for a preview; as it is, when every action was skipped), or as the first call with this Idempotency-Key left it (header idempotent-replayed: true)', examples.changed),
      400: error(`${invalid}; ORDER_INVALID_IDEMPOTENCY_KEY: the header is not ${IDEMPOTENCY_KEY_RULE}`,
        errorExamples(new codes.FST_ERR_VALIDATION('body/actions/0 must have required property \'type\''), new codes.ORDER_INVALID_IDEMPOTENCY_KEY(IDEMPOTENCY_KEY_RULE))),
      403: forbidden('changeOrder'),
      404: error('ORDER_NOT_FOUND: no such order in the caller\'s scope', errorExamples(new codes.ORDER_NOT_FOUND(id))),
      409: error('ORDER_CHANGE_REFUSED: an action the order as stored does not allow (the message names its position and the limit), or the change guard refused it (the message is the guard\'s); ORDER_VERSION_CONFLICT: `expectedVersion` is not the stored version; ORDER_IDEMPOTENCY_IN_PROGRESS: a request with the same Idempotency-Key is still running',
        errorExamples(new codes.ORDER_CHANGE_REFUSED('actions[0]: items[0] has 2 open, not 3'), new codes.ORDER_VERSION_CONFLICT(id, 2), new codes.ORDER_IDEMPOTENCY_IN_PROGRESS())),
      413: tooLarge,
      415: notJson,
      422: error('ORDER_IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used with another body', errorExamples(new codes.ORDER_IDEMPOTENCY_KEY_REUSED())),
      503: unavailable
    }
  })

  return { getOrderList, createOrder, updateOrderStatus, changeOrder }
}

/**
 * The routes read JSON only. An empty body is a missing body whatever its Content-Type
 * (getOrderList reads it as {}); any other body that is not JSON is 415.
 */
function readJsonOnly (app: FastifyInstance): void {
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
}

/**
 * Each route's span, from body validation on (a 400 included), the active span while the rules run:
 * hooks for the route, and a way to run in its span. Without a tracer provider (no SDK, or no
 * @opentelemetry/api) the routes get no hooks at all.
 */
function routeSpans (telemetry: Telemetry) {
  // Without tracing no request has a span: nothing to look up.
  if (!telemetry.tracing) {
    return {
      spanOf: (_request: FastifyRequest): RouteSpan | undefined => undefined,
      inSpan: <T>(_request: FastifyRequest, run: () => T): T => run(),
      traced: (_name: OperationSpanName) => ({ preValidation: [], onError: undefined, onResponse: undefined })
    }
  }
  const spans = new WeakMap<FastifyRequest, RouteSpan>()
  return {
    spanOf: (request: FastifyRequest) => spans.get(request),
    // Every request a route's handler runs has its span: preValidation started it.
    inSpan: <T>(request: FastifyRequest, run: () => T): T => telemetry.withSpan(spans.get(request)!, run),
    traced (name: OperationSpanName) {
      const preValidation: preValidationHookHandler = (request, _reply, done) => {
        const span = telemetry.startSpan(name)
        spans.set(request, span)
        telemetry.withSpan(span, done)
      }
      const onError: onErrorHookHandler = (request, _reply, error, done) => {
        spans.get(request)?.fail(error)
        done()
      }
      const onResponse: onResponseHookHandler = (request, _reply, done) => {
        spans.get(request)?.end()
        done()
      }
      return { preValidation: [preValidation], onError, onResponse }
    }
  }
}

/** Whether authorize gave a promise to await; reading `then` of a revoked Proxy throws, and checkScope fails that closed. */
function isThenable (decision: unknown): decision is PromiseLike<unknown> {
  try {
    return typeof (decision as PromiseLike<unknown> | undefined)?.then === 'function'
  } catch {
    return false
  }
}

/** What a route does instead of running when authorize gave no scope: it has answered already. */
const refused = Symbol('refused')

/**
 * The scope of a request: authorize's decision, checked. An authorize that gives something not a
 * scope is the host's error: the request reads and writes nothing and answers 500
 * ORDER_INVALID_SCOPE, sent here so that it is logged once per operation rather than once per
 * request (as an error thrown to Fastify would be).
 */
function scopeReader (authorize: Authorize, spanOf: (request: FastifyRequest) => RouteSpan | undefined) {
  const misconfigured = new Set<OrderOperation>()
  return async function scopeOf (request: FastifyRequest, reply: FastifyReply, operation: OrderOperation): Promise<OrderScope | undefined | typeof refused> {
    let decision: unknown = authorize(request, operation)
    if (isThenable(decision)) decision = await decision
    if (decision === false) throw new codes.ORDER_FORBIDDEN(operation)
    try {
      return checkScope(decision, `authorize for ${operation}`)
    } catch (err) {
      const { code, message, statusCode, shape } = err as InstanceType<typeof codes.ORDER_INVALID_SCOPE> & { shape: string }
      if (!misconfigured.has(operation)) {
        misconfigured.add(operation)
        // The route and the scope's shape (types and key names): hosts return user records as scopes by mistake.
        request.log.error({ err, route: request.routeOptions.url, scopeShape: shape }, 'every such request answers 500 until authorize is fixed')
      }
      spanOf(request)?.fail(err)
      await reply.code(statusCode!).send({ statusCode, code, error: 'Internal Server Error', message })
      return refused
    }
  }
}

export async function orderRoutes (fastify: FastifyInstance, options: OrderRoutesOptions): Promise<void> {
  const { rules, schemas, bodyLimit, authorize, hooks, telemetry, workflow, changes } = options
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.addSchema(schemas.Order)
  app.addSchema(schemas.OrderError)
  readJsonOnly(app)

  /**
   * A route's body validator: the schema itself, checked by our own strict validator whatever ajv
   * options the host gave Fastify. OpenAPI shows a form made from the same schema, so the two cannot
   * drift. The Idempotency-Key header schema is there for OpenAPI; the rules check the header, so it
   * answers with its own code.
   */
  function validatorOf (schema: object): FastifySchemaCompiler<unknown> {
    const validate = options.validatorOf(schema)
    return ({ httpPart }) => httpPart === 'body' ? validate : accept
  }

  const spans = routeSpans(telemetry)
  // Without authorize every request may do everything: no scope, and no turn spent waiting for one.
  const scopeOf = authorize === undefined ? undefined : scopeReader(authorize, spans.spanOf)

  const route = routeSchemasOf(schemas, {
    list: openApiSchemaOf(schemas.ListOrdersBody),
    create: openApiSchemaOf(schemas.CreateOrderBody),
    update: openApiSchemaOf(schemas.UpdateOrderStatusBody),
    change: openApiSchemaOf(schemas.ChangeOrderBody)
  }, workflow, changes !== undefined)
  // The shared schemas the responses name by $ref: JSON Schema as TypeBox builds it.
  const serializerCompiler = serializersOf({ Order: schemas.ServedOrder, OrderError: schemas.OrderError } as Record<string, SerializedSchema>)
  const common = { bodyLimit, serializerCompiler, onRequest: hooks?.onRequest, preHandler: hooks?.preHandler }
  // An order is answered through its serializer set on the reply. The success answers are documented
  // per media type (beside a $ref, the only place their examples survive), and Fastify would look such
  // a route's serializer up by status and media type on every answer: that cost a create more than
  // writing the order. The preSerialization hooks of a host still see the order.
  const writeOrder = serializerCompiler({ schema: { $ref: 'Order#' } })
  const answer = (reply: FastifyReply, order: Order) => reply.type(JSON_MEDIA_TYPE).serializer(writeOrder).send(order)

  const { traced, inSpan, spanOf } = spans
  const listTrace = traced('order.list')
  app.post('/order/getOrderList', {
    ...common,
    ...listTrace,
    schema: route.getOrderList,
    validatorCompiler: validatorOf(schemas.ListOrdersBody),
    // No body (or an empty one) reads the first page; a JSON null is a body, and not an object.
    // A callback hook: an async one costs a promise per request.
    preValidation: [...listTrace.preValidation, (request, _reply, done) => {
      if (request.body === undefined) request.body = {}
      done()
    }]
  }, async (request, reply) => {
    const scope = scopeOf === undefined ? undefined : await scopeOf(request, reply, 'getOrderList')
    const consistency = request.headers['order-consistency'] as string | undefined
    return scope === refused ? reply : inSpan(request, () => rules.list(request.body, { scope, consistency }))
  })

  app.post('/order/createOrder', { ...common, ...traced('order.create'), schema: route.createOrder, validatorCompiler: validatorOf(schemas.CreateOrderBody) }, async (request, reply) => {
    const scope = scopeOf === undefined ? undefined : await scopeOf(request, reply, 'createOrder')
    if (scope === refused) return reply
    const result = await inSpan(request, () => rules.create(request.body, { scope, idempotencyKey: request.headers['idempotency-key'], onConsistency: consistentReply(reply) }))
    spanOf(request)?.setOrderId(result.order.id)
    if (result.replayed) reply.header('idempotent-replayed', 'true')
    return answer(reply.code(201), result.order)
  })

  app.post('/order/updateOrderStatus', { ...common, ...traced('order.update_status'), schema: route.updateOrderStatus, validatorCompiler: validatorOf(schemas.UpdateOrderStatusBody) }, async (request, reply) => {
    const scope = scopeOf === undefined ? undefined : await scopeOf(request, reply, 'updateOrderStatus')
    // order.id only once the order is found: an id naming no order is a client's text.
    const found = (order: { id: string }) => { spanOf(request)?.setOrderId(order.id) }
    if (scope === refused) return reply
    return answer(reply, await inSpan(request, () => rules.updateStatus(request.body, { scope, found, onConsistency: consistentReply(reply) })))
  })

  if (options.stream !== undefined) {
    const { deskHooks, ...stream } = options.stream
    eventStreamRoute(app, {
      ...stream,
      serializerCompiler,
      // The desk's (a staff login) first, then the data routes' own.
      onRequest: hooksOf(deskHooks?.onRequest, hooks?.onRequest),
      preHandler: hooksOf(deskHooks?.preHandler, hooks?.preHandler),
      async scopeOf (request, reply) {
        const scope = scopeOf === undefined ? undefined : await scopeOf(request, reply, 'streamEvents')
        return scope === refused ? undefined : { scope }
      }
    })
  }

  if (changes?.route !== true) return
  app.post('/order/changeOrder', { ...common, ...traced('order.change'), schema: route.changeOrder(changes), validatorCompiler: validatorOf(schemas.ChangeOrderBody) }, async (request, reply) => {
    const scope = scopeOf === undefined ? undefined : await scopeOf(request, reply, 'changeOrder')
    if (scope === refused) return reply
    const found = (order: { id: string }) => { spanOf(request)?.setOrderId(order.id) }
    const result = await inSpan(request, () => rules.change(request.body, { scope, idempotencyKey: request.headers['idempotency-key'], found, onConsistency: consistentReply(reply) }))
    if (result.replayed) reply.header('idempotent-replayed', 'true')
    return answer(reply, result.order)
  })
}

/** Over replicas, a write's answer carries its token, which getOrderList takes back from any instance. */
function consistentReply (reply: FastifyReply): (token: string) => void {
  return token => { reply.header('order-consistency', token) }
}

/** Response serializers by the text of their schema and of the shared schemas it names. */
const serializerOnce = compiledOnce(({ schema, shared }: { schema: SerializedSchema, shared: Record<string, SerializedSchema> }) =>
  fastJson(schema, { schema: shared }))

/**
 * The response serializer of each schema (in its serialized form), compiled once per process for every
 * app whose routes give the same schemas: after the validators, compiling serializers is most of what
 * `register` costs. `schemas` are the schemas the responses name by `$ref` (their `$id` as the key).
 */
function serializersOf (schemas: Record<string, SerializedSchema>) {
  const shared = Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, serializedFormOf(schema)]))
  const sharedText = JSON.stringify(shared)
  return ({ schema }: { schema: unknown }) => {
    const form = serializedFormOf(schema as SerializedSchema)
    return serializerOnce(`${JSON.stringify(form)}\n${sharedText}`, { schema: form, shared })
  }
}
