// Hostile input: whatever body and Content-Type a client sends, the answer is a well-formed 2xx or 4xx.
import t from 'tap'
import { buildApp } from './helper.js'

t.test('getOrderList answers a JSON null body with 400, like any body that is not an object', async t => {
  const app = await buildApp(t)
  for (const payload of ['null', '[]', '"{}"', '0']) {
    const response = await app.inject({ method: 'POST', url: '/order/getOrderList', payload, headers: { 'content-type': 'application/json' } })
    t.equal(response.statusCode, 400, payload)
    t.equal(response.json().code, 'FST_ERR_VALIDATION', payload)
  }
})
