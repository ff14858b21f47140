// OpenAPI for outside tools: the document passes swagger-parser and Redocly in OpenAPI 3.0 and 3.1.
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import SwaggerParser from '@apidevtools/swagger-parser'
import { BaseResolver, createConfig, lintDocument, makeDocumentFromString } from '@redocly/openapi-core'
import { Ajv } from 'ajv'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import orderPlugin, { CreateOrderBodySchema, type OrderPluginOptions } from '../../lib/index.js'
import { openApiSchemaOf } from '../../lib/http/openapi.js'
import { buildServer } from '../../examples/server.js'
import { buildServer as buildAuthServer } from '../../examples/auth.js'
import { buildApp, exampleMemoryStorage, orderBody, post } from '../helper.js'
import { createBodyArb } from '../orders/order-arbitraries.js'
import { Gift, Shipping } from '../custom-field-schemas.js'

// @fastify/swagger's default, and the other version it writes.
const versions = [undefined, '3.1.0'] as const
const optionSets: Array<[string, OrderPluginOptions]> = [
  ['the default options', {}],
  ['a custom workflow', { workflow: { initial: 'new', transitions: { new: ['done', 'void'], done: [], void: [] } }, maxItems: 5, prefix: '/api' }],
  ['custom fields on orders and items', { customFields: { order: Shipping, item: Gift } }],
  ['changes with their route', { changes: { route: true } }],
  ['the event stream', { stream: true }]
]
// Redocly's smallest ruleset, built in: no configuration file and no network.
const minimal = createConfig({ extends: ['minimal'] })

async function documentOf (t: Test, openapi: string | undefined, register: (app: FastifyInstance) => PromiseLike<unknown>) {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(swagger, { openapi: { ...(openapi !== undefined && { openapi }), info: { title: 'orders', version: '1.0.0' } } })
  await register(app)
  await app.ready()
  return app.swagger() as { openapi: string }
}

/** Both validators' findings: swagger-parser's message, then Redocly's errors (and warnings, which are advice). */
async function problemsOf (document: object, { warnings = false } = {}): Promise<string[]> {
  const problems: string[] = []
  // swagger-parser dereferences the document it is given, so it gets a copy.
  await SwaggerParser.validate(structuredClone(document) as never).catch((error: Error) => problems.push(error.message))
  const lint = await lintDocument({
    document: makeDocumentFromString(JSON.stringify(document), '/openapi.json'),
    config: await minimal,
    externalRefResolver: new BaseResolver()
  })
  for (const problem of lint) {
    if (problem.severity === 'error' || warnings) problems.push(`${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)
  }
  return problems
}

for (const openapi of versions) {
  for (const [name, options] of optionSets) {
    t.test(`the OpenAPI ${openapi ?? '3.0.3'} document passes swagger-parser and Redocly's minimal rules with ${name}`, async t => {
      const document = await documentOf(t, openapi, app => app.register(orderPlugin, options))
      t.equal(document.openapi, openapi ?? '3.0.3')
      t.same(await problemsOf(document), [])
    })
  }
}

t.test('the examples\' documents pass both validators; the auth example\'s, with servers and security, draws no warning either', async t => {
  const plain = await buildServer({ logger: false }, exampleMemoryStorage())
  const auth = await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage())
  t.teardown(() => Promise.all([plain.close(), auth.close()]))
  t.same(await problemsOf((await plain.inject('/docs/json')).json()), [])
  t.same(await problemsOf((await auth.inject('/docs/json')).json(), { warnings: true }), [])
})

t.test('createOrder documents the metadata key length in words, since OpenAPI 3.0 has no keyword for it', async t => {
  const document = await documentOf(t, undefined, app => app.register(orderPlugin))
  const metadata = JSON.parse(JSON.stringify(document)).paths['/order/createOrder'].post.requestBody.content['application/json'].schema.properties.metadata
  t.same(metadata, {
    type: 'object',
    maxProperties: 50,
    additionalProperties: { type: 'string', maxLength: 500 },
    description: 'String to string: at most 50 keys of 1 to 40 characters, values of at most 500 characters'
  })
})

t.test('a metadata key of 0 or 41 characters is still a 400, from the route and from app.orders', async t => {
  const app = await buildApp(t)
  for (const key of ['', 'k'.repeat(41)]) {
    const { status, body } = await post(app, 'createOrder', orderBody({ metadata: { [key]: 'v' } }))
    t.equal(status, 400)
    t.equal(body.code, 'FST_ERR_VALIDATION')
    await t.rejects(app.orders.create(orderBody({ metadata: { [key]: 'v' } })), { code: 'FST_ERR_VALIDATION', statusCode: 400 })
  }
  t.equal((await post(app, 'createOrder', orderBody({ metadata: { ['k'.repeat(40)]: 'v' } }))).status, 201)
})

t.test('the documented createOrder body accepts every body the route accepts', async t => {
  const documented = new Ajv({ strict: false }).compile(openApiSchemaOf(CreateOrderBodySchema))
  fc.assert(fc.property(createBodyArb, body => documented(body)))
  t.pass()
})

// A host's object schema may use any keyword the plugin's validator knows, OpenAPI 3.0 or not.
const hostSchema = {
  type: 'object',
  properties: {
    tuple: { type: 'array', items: [{ type: 'number' }, { type: 'string' }], additionalItems: false, minItems: 2 },
    openTuple: { type: 'array', items: [{ type: 'string' }] },
    tupleWithRest: { type: 'array', items: [{ type: 'string' }], additionalItems: { type: 'number' } },
    record: { type: 'object', patternProperties: { '^(.*)$': { type: 'number' } } },
    patterns: { type: 'object', patternProperties: { '^a': { type: 'string' }, '^b': { type: 'number' } }, additionalProperties: false },
    patternsAndRest: { type: 'object', patternProperties: { '^a': { type: 'string' } }, additionalProperties: { type: 'number' } },
    noPatterns: { type: 'object', patternProperties: {}, additionalProperties: false },
    openPatterns: { type: 'object', patternProperties: { '^a': { type: 'string' } }, additionalProperties: true },
    literal: { const: 'gift', type: 'string' },
    literalInEnum: { const: 'a', enum: ['a', 'b'] },
    nullable: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    positive: { type: 'number', exclusiveMinimum: 0 },
    bounded: { type: 'number', minimum: 1, exclusiveMinimum: 0, maximum: 10, exclusiveMaximum: 5 },
    shortKeys: { type: 'object', propertyNames: { maxLength: 3 }, additionalProperties: { type: 'string' } },
    conditional: { type: 'object', if: { required: ['a'] }, then: { required: ['b'] }, else: { required: ['c'] } },
    dependent: { type: 'object', dependencies: { a: ['b'] } },
    contains: { type: 'array', contains: { type: 'string' } },
    booleans: { type: 'object', properties: { anything: true, nothing: false } },
    never: { not: {} },
    notLoosened: { not: { type: 'object', propertyNames: { maxLength: 2 } } },
    oneOfLoosened: { oneOf: [{ type: 'object', propertyNames: { maxLength: 2 } }, { type: 'string' }] },
    oneOfBeside: { anyOf: [{ type: 'string' }, { type: 'object' }], oneOf: [{ type: 'object', propertyNames: { maxLength: 2 } }, { type: 'string' }] },
    union: { type: ['string', 'number'] },
    date: { type: 'string', format: 'date', examples: ['2026-01-01'], $comment: 'shipping day' },
    extended: { type: 'string', 'x-label': 'Gift note' }
  },
  required: ['tuple'],
  additionalProperties: false
}

t.test('a host\'s object schema with keywords OpenAPI 3.0 lacks is documented validly in both versions', async t => {
  for (const openapi of versions) {
    const document = await documentOf(t, openapi, async app => {
      // The plugin validates with the host's schema itself; this route only shows its documented form.
      app.setValidatorCompiler(() => () => true)
      app.post('/host', { schema: { body: openApiSchemaOf(hostSchema) } }, async () => 'ok')
    })
    t.same(await problemsOf(document), [], openapi ?? '3.0.3')
  }
  const documented = openApiSchemaOf(hostSchema).properties
  t.same(documented.tuple, { type: 'array', items: { anyOf: [{ type: 'number' }, { type: 'string' }] }, minItems: 2 })
  t.same(documented.record, { type: 'object', additionalProperties: { type: 'number' } })
  t.same(documented.patterns.additionalProperties, { anyOf: [{ type: 'string' }, { type: 'number' }] })
  t.same(documented.literal, { enum: ['gift'], type: 'string' })
  t.same(documented.bounded, { type: 'number', minimum: 1, maximum: 5 })
  t.same(documented.shortKeys, { type: 'object', additionalProperties: { type: 'string' } })
  t.same(documented.oneOfLoosened, { anyOf: [{ type: 'object' }, { type: 'string' }] })
})

t.test('a host\'s schema in its documented form accepts every value the schema accepts', async t => {
  const ajv = new Ajv({ strict: false, validateFormats: false })
  const [source, documented] = [ajv.compile(hostSchema), ajv.compile(openApiSchemaOf(hostSchema))]
  const values = [
    { tuple: [1, 'a'] },
    {
      tuple: [1, 'a'],
      openTuple: ['a', 2, null],
      tupleWithRest: ['a', 1, 2],
      patterns: { a1: 'x', b1: 2 },
      patternsAndRest: { a: 'x', z: 1 },
      noPatterns: {},
      literal: 'gift',
      literalInEnum: 'a',
      nullable: null,
      positive: 0.5,
      bounded: 4.5,
      shortKeys: { abc: 'x' },
      conditional: { a: 1, b: 2 },
      dependent: { a: 1, b: 2 },
      contains: [1, 'a'],
      booleans: { anything: [1] },
      notLoosened: 'text',
      oneOfLoosened: { ab: 1 },
      oneOfBeside: 'text',
      union: 3,
      date: '2026-01-01'
    }
  ]
  for (const value of values) {
    t.ok(source(value), 'the host schema accepts it')
    t.ok(documented(value), 'so does its documented form')
  }
})

t.test('a schema OpenAPI 3.0 reads as it is is documented as it is', async t => {
  const schema = { type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['a'] }
  t.equal(openApiSchemaOf(schema), schema, 'the same object, not a copy')
})
