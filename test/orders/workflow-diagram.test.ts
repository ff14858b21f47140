// The workflow explains itself: a Mermaid diagram of it, and its moves in the OpenAPI description of updateOrderStatus.
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import t, { type Test } from 'tap'
import orderPlugin, { defaultWorkflow, workflowDiagram, type OrderPluginOptions } from '../../lib/index.js'

t.test('workflowDiagram draws the default workflow: the start, every move, and an end after each final status', async t => {
  t.equal(workflowDiagram(defaultWorkflow), [
    'stateDiagram-v2',
    '  [*] --> pending',
    '  pending --> paid',
    '  pending --> cancelled',
    '  paid --> shipped',
    '  paid --> cancelled',
    '  paid --> refunded',
    '  shipped --> delivered',
    '  shipped --> refunded',
    '  delivered --> refunded',
    '  cancelled --> [*]',
    '  refunded --> [*]',
    ''
  ].join('\n'))
})

t.test('a status name that is not a plain word gets an id, with its name as the label', async t => {
  const diagram = workflowDiagram({ initial: 'new', transitions: { new: ['in-transit'], 'in-transit': ['done.ok'], 'done.ok': [] } })
  t.equal(diagram, [
    'stateDiagram-v2',
    '  state "in-transit" as status_1',
    '  state "done.ok" as status_2',
    '  [*] --> new',
    '  new --> status_1',
    '  status_1 --> status_2',
    '  status_2 --> [*]',
    ''
  ].join('\n'))
})

t.test('workflowDiagram refuses a workflow register would refuse', async t => {
  t.throws(() => workflowDiagram({ initial: 'new', transitions: { new: ['gone'] } }), { code: 'ORDER_INVALID_OPTIONS', message: /transitions\.new moves to "gone"/ })
})

async function updateOperationOf (t: Test, options: OrderPluginOptions) {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(swagger, { openapi: { info: { title: 'orders', version: '1.0.0' } } })
  await app.register(orderPlugin, options)
  await app.ready()
  return (app.swagger() as { paths: Record<string, { post: { description: string, responses: Record<string, { description: string }> } }> }).paths['/order/updateOrderStatus']!.post
}

t.test('the OpenAPI description of updateOrderStatus lists the moves of the configured workflow and documents ORDER_TRANSITION_REFUSED', async t => {
  const byDefault = await updateOperationOf(t, {})
  t.match(byDefault.description, [
    'The moves of this workflow (new orders start pending):',
    '- pending → paid or cancelled',
    '- paid → shipped, cancelled or refunded',
    '- shipped → delivered or refunded',
    '- delivered → refunded',
    '- cancelled: final',
    '- refunded: final'
  ].join('\n'))
  t.notMatch(byDefault.description, /guard/)
  t.match(byDefault.responses['409']!.description, /ORDER_TRANSITION_REFUSED: a guard of the workflow refused the move/)
  t.match(byDefault.responses['400']!.description, /the message lists the statuses/)

  const custom = await updateOperationOf(t, {
    workflow: { initial: 'new', transitions: { new: ['done', 'void'], done: [], void: [] }, guards: { done: () => true, void: () => true } }
  })
  t.match(custom.description, '- new → done or void\n- done: final\n- void: final\n\nA move to done or void is also checked by a guard of this server')
  t.notMatch(custom.description, /pending/)
})
