// One order in the desk, driven by roles and names: its details and regions, the moves the workflow allows with their dialog, and every refusal in the server's words.
import t from 'tap'
import { defaultWorkflow } from '../../lib/index.js'
import { buildApp, createOrder } from '../helper.js'
import type { FastifyInstance } from 'fastify'
import { listening, newPage, pageErrors, screenshotPath, skip, violations, type InPage } from './browser.js'

/** The order as stored. */
const stored = async (app: FastifyInstance, id: string) => (await app.orders.list({ filter: { ids: [id] } })).items[0]!

t.test('an order shows its details, lines and history; a move goes through its dialog with the version shown; Escape closes it and gives focus back', { skip }, async t => {
  const app = await buildApp(t, { desk: { title: 'Shop desk' } })
  const order = await createOrder(app, { reference: 'cart_8f2', items: [{ sku: 'A-1', name: 'Mug', quantity: 2, unitPrice: 1250 }, { sku: 'B-7', quantity: 1, unitPrice: 999 }] })
  await app.orders.updateStatus({ id: order.id, status: 'paid', reason: 'card captured' }, { scope: { actor: 'staff:ada' } })
  const page = await newPage(t)
  await page.goto(`${await listening(app)}/order/desk`)
  await page.getByRole('link', { name: `#${order.number}` }).click()

  await page.getByRole('heading', { name: `Order #${order.number}` }).waitFor()
  t.match(page.url(), `order=${order.id}`, 'the order is in the address')
  const lines = page.getByRole('region', { name: 'Lines' })
  t.same(await lines.getByRole('row').nth(1).getByRole('cell').allTextContents(), ['A-1', 'Mug', '2', '€12.50'])
  const history = page.getByRole('region', { name: 'History' })
  t.match(await history.textContent(), /placed as pending.*moved to paid by staff:ada: card captured/s, 'who moved it, when and why, oldest first')
  t.match(await page.locator('main').textContent(), 'cart_8f2')
  t.equal(await page.getByRole('region', { name: 'Payments' }).count(), 0, 'no payments region with changes off')
  t.same(await page.getByRole('button', { name: /^Move to / }).allTextContents(), ['Move to shipped', 'Move to cancelled', 'Move to refunded'], 'exactly the moves the workflow allows')
  t.same(await violations(page), [], 'no serious or critical violation on an order')
  await page.screenshot({ path: screenshotPath('desk-order.png'), clip: { x: 0, y: 0, width: 1000, height: 620 } })

  const ship = page.getByRole('button', { name: 'Move to shipped' })
  await ship.click()
  const dialog = page.getByRole('dialog', { name: `Move order #${order.number} to shipped` })
  await dialog.waitFor()
  t.same(await violations(page), [], 'no serious or critical violation with the move dialog open')
  await page.keyboard.press('Escape')
  await dialog.waitFor({ state: 'detached' })
  t.ok(await ship.evaluate(element => element === (globalThis as unknown as InPage).document.activeElement), 'Escape gives focus back to the button that opened the dialog')
  await ship.click()
  await dialog.getByRole('button', { name: 'Cancel' }).click()
  t.equal(await dialog.count(), 0, 'Cancel closes it')

  await ship.click()
  await dialog.getByRole('textbox', { name: 'Reason' }).fill('DHL 123')
  await dialog.getByRole('button', { name: 'Confirm' }).click()
  await page.getByRole('button', { name: 'Move to delivered' }).waitFor()
  const now = await stored(app, order.id)
  t.match(now, { status: 'shipped', version: 3 })
  t.equal(now.statusHistory.at(-1)!.reason, 'DHL 123')
  t.match(await history.textContent(), /moved to shipped: DHL 123/)

  await page.getByRole('link', { name: 'Back to orders' }).click()
  await page.getByRole('table', { name: 'Orders' }).waitFor()
  t.same(pageErrors.get(page), [])
})

t.test('a guard\'s refusal and a version conflict show as alerts in the server\'s words, with the order as now stored', { skip }, async t => {
  const app = await buildApp(t, {
    desk: true,
    workflow: { ...defaultWorkflow, guards: { shipped: ({ order }) => order.metadata.packed === 'yes' || 'Not packed yet: pack it before shipping' } }
  })
  const order = await createOrder(app)
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  const page = await newPage(t)
  await page.goto(`${await listening(app)}/order/desk?order=${order.id}`)
  await page.getByRole('button', { name: 'Move to shipped' }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click()
  t.equal(await page.getByRole('alert').textContent(), 'Not packed yet: pack it before shipping')
  t.equal((await stored(app, order.id)).status, 'paid', 'nothing moved')

  // Another writer moves it while the move dialog is open on version 2.
  await page.getByRole('button', { name: 'Move to cancelled' }).click()
  await app.orders.updateStatus({ id: order.id, status: 'cancelled' })
  await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click()
  await page.getByRole('alert').filter({ hasText: 'version' }).waitFor()
  t.match(await page.getByRole('alert').textContent(), /expected version 2|version/)
  t.equal(await page.getByRole('button', { name: /^Move to / }).count(), 0, 'the order shown is the one stored now: cancelled, with no move left')
  t.match(await page.getByRole('region', { name: 'History' }).textContent(), 'moved to cancelled')
  t.equal((await stored(app, order.id)).version, 3, 'nothing retried behind the user\'s back')
  t.same(pageErrors.get(page), [])
})

t.test('markup in every field is shown as its characters and runs nothing', { skip }, async t => {
  const app = await buildApp(t, { desk: true, changes: true })
  const markup = (where: string) => `<img src=x onerror="window.pwned=true">${where}<script>window.pwned=true</script>`
  const order = await createOrder(app, {
    customerId: markup('c'),
    reference: '<b>ref</b>',
    items: [{ sku: '<i>sku</i>', name: markup('n'), quantity: 1, unitPrice: 100 }],
    metadata: { '<u>k</u>': markup('m') }
  })
  await app.orders.updateStatus({ id: order.id, status: 'paid', reason: markup('r') }, { scope: { actor: '<em>staff</em>' } })
  await app.orders.change({ id: order.id, actions: [{ type: 'recordPayment', amount: 100, reference: markup('p').slice(0, 200) }], reason: markup('why') })
  const page = await newPage(t)
  await page.goto(`${await listening(app)}/order/desk`)
  const table = page.getByRole('table', { name: 'Orders' })
  await table.waitFor()
  t.match(await table.textContent(), markup('c'), 'the customer id as its characters')
  await table.getByRole('link').click()
  const main = page.locator('main')
  await page.getByRole('region', { name: 'Payments' }).waitFor()
  const text = await main.textContent()
  for (const shown of [markup('n'), markup('m'), markup('r'), markup('why'), '<b>ref</b>', '<i>sku</i>', '<u>k</u>', '<em>staff</em>']) t.match(text, shown)
  t.equal(await main.locator('img, script, b, i, u, em').count(), 0, 'no element made from data')
  t.equal(await page.evaluate(() => (globalThis as unknown as InPage).pwned), false, 'nothing ran')
  t.same(pageErrors.get(page), [])
})

t.test('a 401 asks for an access token, kept for the tab only and sent as a bearer token on every call', { skip }, async t => {
  const seen: Array<string | undefined> = []
  const app = await buildApp(t, {
    desk: true,
    authorize: request => {
      seen.push(request.headers.authorization)
      if (request.headers.authorization !== 'Bearer s3cret') throw Object.assign(new Error('Sign in first'), { statusCode: 401 })
      return true
    }
  })
  const order = await createOrder(app, { customerId: 'cus_7' }).catch(() => undefined)
  t.equal(order, undefined, 'the routes want the token')
  await app.orders.create({ customerId: 'cus_7', currency: 'EUR', items: [{ sku: 'A-1', quantity: 1, unitPrice: 100 }] })
  const page = await newPage(t)
  const origin = await listening(app)
  await page.goto(`${origin}/order/desk`)
  const token = page.getByLabel('Access token')
  await token.waitFor()
  t.equal(await token.getAttribute('type'), 'password')
  await token.fill('wrong')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign in' }).waitFor()
  await page.getByLabel('Access token').fill('s3cret')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('table', { name: 'Orders' }).getByRole('link').waitFor()
  t.equal(seen.at(-1), 'Bearer s3cret')
  t.notMatch(page.url(), 's3cret', 'never in the address')
  t.same(await page.context().cookies(), [], 'never in a cookie')
  t.equal(await page.evaluate(() => Object.values((globalThis as unknown as InPage).sessionStorage).includes('s3cret')), true, 'kept in sessionStorage')
  t.equal(await page.evaluate(() => Object.values((globalThis as unknown as InPage).localStorage).length), 0)
  await page.reload()
  await page.getByRole('table', { name: 'Orders' }).getByRole('link').waitFor()
  t.pass('a reload in the same tab keeps the token')
  const other = await newPage(t)
  await other.goto(`${origin}/order/desk`)
  await other.getByLabel('Access token').waitFor()
  t.pass('another tab asks again')
})
