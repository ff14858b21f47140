// The example servers work as the README says: docs, the three routes, authentication and scope, their data directory.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { stripVTControlCharacters } from 'node:util'
import t, { type Test } from 'tap'
import { buildServer, documentServers, exampleLogger, version } from '../examples/server.js'
import { buildServer as buildAuthServer } from '../examples/auth.js'
import { createExampleStorage, LOCK_FILE, lockDataDirectory } from '../examples/storage.js'
import { buildWebhookServer, startWebhook } from '../examples/webhooks.js'
import { eventually, exampleMemoryStorage, logLines, orderBody, uncoveredChild } from './helper.js'

t.test('the example server serves Swagger UI at /docs and the OpenAPI document beside it', async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const page = await app.inject('/docs/')
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  const spec = (await app.inject('/docs/json')).json()
  t.same(Object.keys(spec.paths).sort(), ['/order/changeOrder', '/order/createOrder', '/order/events', '/order/getOrderList', '/order/updateOrderStatus'], 'the routes, the event stream the desk turns on among them; the desk\'s own are hidden')
  t.ok(spec.components.schemas.Order, 'the Order component keeps its name')
})

t.test('once listening, the example says where Swagger UI is', async t => {
  const { lines, stream } = logLines()
  for (const build of [buildServer, (options: object) => buildAuthServer(options, 'test secret', exampleMemoryStorage())]) {
    const app = await build({ logger: { stream } }, exampleMemoryStorage())
    t.teardown(() => app.close())
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    t.ok(lines.some(line => line.msg === `Swagger UI at ${address}/docs, the OpenAPI document at ${address}/docs/json`), address)
  }
})

const root = fileURLToPath(new URL('..', import.meta.url))

/** A process started through tsx that takes the lock of `directory` and, unless `exit`, holds it until killed; its pid once locked. */
function lockingProcess (t: Test, directory: string, { exit = false, inShell = false } = {}) {
  const { execArgv, env } = uncoveredChild()
  const script = `const { lockDataDirectory } = await import('./examples/storage.ts'); lockDataDirectory(${JSON.stringify(directory)}); ${exit ? '' : 'setInterval(() => {}, 1000)'}`
  const node = [process.execPath, ...execArgv, '--input-type=module', '-e', script]
  // In a shell that becomes `sleep`, which never reaps its children: the process, once it exits, stays a zombie.
  const child = inShell
    ? spawn('sh', ['-c', `${node.map(word => `'${word.replaceAll("'", "'\\''")}'`).join(' ')} & exec sleep 120`], { cwd: root, env })
    : spawn(node[0]!, node.slice(1), { cwd: root, env })
  t.teardown(() => child.kill('SIGKILL'))
  return child
}

/** The pid and state (Z: a zombie) of the process a lock file names, once it names one in that state. */
async function lockHolder (lock: string, state = /./): Promise<{ pid: number, state: string }> {
  // A child loading tsx takes seconds on a busy machine.
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(20)) {
    const pid = existsSync(lock) ? Number(readFileSync(lock, 'utf8').split(' ')[0]) : 0
    // Written a moment after it is created.
    if (pid === 0) continue
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const holder = { pid, state: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]! }
    if (state.test(holder.state)) return holder
  }
  throw new Error(`not within 60 s: ${lock} names a process in state ${state}`)
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot. */
const startOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19])

t.test('one process at a time opens a data directory: a live holder refuses a second with what to do, and a killed one\'s lock is taken over', async t => {
  const directory = mkdtempSync(join(tmpdir(), 'fastify-order-example-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const lock = join(directory, LOCK_FILE)

  // Another process holds the directory: the lock file names it.
  const other = lockingProcess(t, directory)
  const { pid } = await lockHolder(lock)
  t.equal(pid, other.pid)
  for (const refused of [createExampleStorage({ DATA_DIR: directory }), buildServer({ logger: false }, undefined, { DATA_DIR: directory })] as Array<Promise<unknown>>) {
    await t.rejects(refused, { message: `${directory} is open in process ${other.pid}` })
    await t.rejects(refused, { message: /another directory with DATA_DIR/ })
  }
  t.equal(readFileSync(lock, 'utf8'), `${other.pid} ${startOf(other.pid!)}`, 'the holder keeps its lock')

  // It ends without unlocking (killed): its lock no longer counts.
  other.kill('SIGKILL')
  await once(other, 'exit')
  const { created, unlock } = lockDataDirectory(directory)
  t.ok(created, 'no database in the directory yet: the first start says it creates one')
  t.equal(readFileSync(lock, 'utf8'), `${process.pid} ${startOf(process.pid)}`)
  t.throws(() => lockDataDirectory(directory), { message: /is open in process/ }, 'nor twice in one process')
  unlock()
  t.notOk(existsSync(lock), 'closing unlocks')

  writeFileSync(join(directory, 'PG_VERSION'), '17')
  t.notOk(lockDataDirectory(directory).created, 'a directory holding a database is opened, not created')
})

t.test('a lock whose pid names a zombie, or now another process (PID 1, this very process), is stale and taken over', { skip: !existsSync('/proc/self/stat') && 'no /proc: the lock is checked by signal alone here' }, async t => {
  const directory = mkdtempSync(join(tmpdir(), 'fastify-order-example-'))
  t.teardown(() => rmSync(directory, { recursive: true, force: true }))
  const lock = join(directory, LOCK_FILE)

  // The holder exited, and its parent has not reaped it yet: the pid still answers signals.
  lockingProcess(t, directory, { exit: true, inShell: true })
  const holder = await lockHolder(lock, /^Z$/)
  t.doesNotThrow(() => process.kill(holder.pid, 0), 'a zombie answers signals')
  const taken = lockDataDirectory(directory)
  t.equal(readFileSync(lock, 'utf8'), `${process.pid} ${startOf(process.pid)}`, 'a zombie\'s lock is taken over')
  taken.unlock()

  // After a container restart the pid a lock names belongs to a new, unrelated process, which started later.
  for (const [name, stale] of [
    ['PID 1', `1 ${startOf(1) - 1}`],
    ['this process', `${process.pid} ${startOf(process.pid) - 1}`],
    ['PID 1, by a release that wrote the pid alone', '1'],
    ['this process, by a release that wrote the pid alone', String(process.pid)]
  ]) {
    writeFileSync(lock, stale!)
    const { unlock } = lockDataDirectory(directory)
    t.equal(readFileSync(lock, 'utf8'), `${process.pid} ${startOf(process.pid)}`, `a stale lock naming ${name} is taken over`)
    unlock()
  }
})

/** `npm start` on its own PGlite in `directory`, in a process group of its own as under a supervisor. */
function npmStart (t: Test, directory: string) {
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...uncoveredChild().env, DATA_DIR: directory, DATABASE_URL: '', HOST: '127.0.0.1', PORT: '0' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  // The whole group, as a supervisor or a container stop kills it: npm, its shell, tsx and the server.
  const killGroup = () => { try { process.kill(-child.pid!, 'SIGKILL') } catch {} }
  t.teardown(killGroup)
  let output = ''
  child.stdout.on('data', chunk => { output += String(chunk) })
  child.stderr.on('data', chunk => { output += String(chunk) })
  const exited = once(child, 'exit')
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const origin = /Swagger UI at (http:\/\/[^/]+)\/docs/.exec(output)?.[1]
      if (origin !== undefined) resolve(origin)
    })
    exited.then(() => reject(new Error(`npm start exited before it listened:\n${output}`)), reject)
  })
  // A start that is meant to fail is awaited through `exited` alone.
  listening.catch(() => {})
  return { listening, exited, output: () => output, kill: async () => { killGroup(); await exited } }
}

t.test('npm start killed with SIGKILL and started again at once serves its orders again, while a second start beside a live one is refused', async t => {
  t.setTimeout(180_000)
  const directory = join(t.testdir(), 'data')
  const post = async (origin: string, operation: string, body: object) => await (await fetch(`${origin}/order/${operation}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body)
  })).json()

  const first = npmStart(t, directory)
  const origin = await first.listening
  const { id } = await post(origin, 'createOrder', orderBody()) as { id: string }

  const second = npmStart(t, directory)
  t.not((await second.exited)[0], 0, 'a second npm start on the same directory fails')
  t.match(second.output(), `${directory} is open in process`, 'saying which process has it open')

  await first.kill()
  const again = npmStart(t, directory)
  const restarted = await again.listening
  t.match(await post(restarted, 'getOrderList', {}), { items: [{ id }] }, 'the restarted server serves the order stored before the kill')
  await again.kill()
})

t.test('the examples\' documents name their server relatively, so "Try it out" calls wherever the docs were opened, and / leads to them', async t => {
  const env = { HOST: '0.0.0.0', PORT: '8080' }
  for (const app of [await buildServer({ logger: false }, exampleMemoryStorage(), env), await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage(), env)]) {
    t.teardown(() => app.close())
    const spec = (await app.inject('/docs/json')).json()
    t.same(spec.servers, documentServers)
    t.equal(spec.info.version, version, 'the document carries the package\'s version')
    const root = await app.inject('/')
    t.equal(root.statusCode, 302)
    t.equal(root.headers.location, '/docs')
    t.notOk(spec.paths['/'], 'the redirect is no part of the API')
  }
})

t.test('the example logs lines a person reads in a terminal, and JSON lines otherwise', async t => {
  for (const isTTY of [true, false]) {
    const written: string[] = []
    const output = Object.assign(new Writable({ write (chunk, _encoding, done) { written.push(String(chunk)); done() } }), { isTTY })
    const app = await buildServer({ logger: exampleLogger(output) }, exampleMemoryStorage())
    t.teardown(() => app.close())
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const message = `Swagger UI at ${address}/docs, the OpenAPI document at ${address}/docs/json`
    await eventually('the address is logged', () => written.join('').includes(message))
    const lines = stripVTControlCharacters(written.join('')).split('\n').filter(line => line !== '')
    if (isTTY) {
      t.ok(lines.some(line => /^\[\d\d:\d\d:\d\d\] INFO: /.test(line) && line.endsWith(`INFO: ${message}`)), 'a time, a level and the message')
      t.notOk(lines.some(line => line.startsWith('{')), 'no JSON')
    } else {
      t.ok(lines.map(line => JSON.parse(line)).some(line => line.msg === message), 'one JSON object a line')
    }
  }
})

t.test('the example server creates, moves and lists orders', async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/order/createOrder', payload: orderBody() })
  t.equal(created.statusCode, 201)
  const { id } = created.json()
  const paid = await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: { id, status: 'paid' } })
  t.match(paid.json(), { id, status: 'paid', version: 2 })
  const page = await app.inject({ method: 'POST', url: '/order/getOrderList' })
  t.match(page.json(), { items: [{ id, status: 'paid' }], nextCursor: null })
})

t.test('the example server changes a placed order: a payment recorded, its retried notice skipped, a line cancelled and refunded', async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const change = async (body: object) => {
    const response = await app.inject({ method: 'POST', url: '/order/changeOrder', payload: body })
    return { status: response.statusCode, body: response.json() }
  }
  const { id } = await app.orders.create(orderBody())
  const payment = { id, actions: [{ type: 'recordPayment', amount: 2500, reference: 'pi_3Q0' }] }
  t.match(await change(payment), { status: 200, body: { id, version: 2, total: 2500, paid: 2500, balance: 0 } })
  t.match(await change(payment), { status: 200, body: { version: 2, payments: [{ kind: 'payment', amount: 2500, reference: 'pi_3Q0' }] } },
    'the same notice again is skipped')
  const cancelled = await change({ id, expectedVersion: 2, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] })
  t.match(cancelled, { status: 200, body: { version: 3, items: [{ quantity: 2, cancelled: 1 }], total: 1250, balance: -1250 } })
  t.match(await change({ id, actions: [{ type: 'recordRefund', amount: 3000, reference: 're_1' }] }),
    { status: 409, body: { code: 'ORDER_CHANGE_REFUSED' } }, 'no refund above what was paid')
  t.match(await change({ id, actions: [{ type: 'recordRefund', amount: 1250, reference: 're_1' }] }), { status: 200, body: { version: 4, paid: 1250, balance: 0 } })
  const [stored] = (await app.orders.list({ filter: { ids: [id] } })).items
  t.match(stored, { version: 4, total: 1250, paid: 1250, balance: 0, changes: [{ version: 2 }, { version: 3 }, { version: 4 }] }, 'as stored')
})

t.test('the example server ships an order only once its payment is recorded with a reason', async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const move = async (id: string, status: string, reason?: string) =>
    (await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: { id, status, reason } })).json()
  const unrecorded = await app.orders.create(orderBody())
  await move(unrecorded.id, 'paid')
  t.match(await move(unrecorded.id, 'shipped'), { statusCode: 409, code: 'ORDER_TRANSITION_REFUSED', message: /^record the payment first/ })
  t.equal((await app.orders.list({ filter: { ids: [unrecorded.id] } })).items[0]!.status, 'paid', 'not shipped')
  const recorded = await app.orders.create(orderBody())
  await move(recorded.id, 'paid', 'pi_3Q0 captured')
  t.match(await move(recorded.id, 'shipped'), { status: 'shipped', version: 3 })
})

t.test('a 400 for an unknown property names it, under body/ from the routes and by its path from app.orders', async t => {
  const app = await buildServer({ logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const body = orderBody()
  const withTotal = { ...body, items: [{ ...body.items[0]!, total: 100 }] }
  const response = await app.inject({ method: 'POST', url: '/order/createOrder', payload: withTotal })
  t.equal(response.statusCode, 400)
  t.match(response.json(), { code: 'FST_ERR_VALIDATION', message: 'body/items/0 must NOT have additional property "total"' })
  await t.rejects(app.orders.create(withTotal), { code: 'FST_ERR_VALIDATION', message: 'items/0 must NOT have additional property "total"' })
  const move = await app.inject({ method: 'POST', url: '/order/updateOrderStatus', payload: { id: 'x', status: 'paid', version: 1 } })
  t.match(move.json(), { code: 'FST_ERR_VALIDATION', message: 'body must NOT have additional property "version"' })
  t.equal((await app.orders.list()).items.length, 0, 'nothing was stored')
})

t.test('the auth example documents its bearer scheme and requires it on every order route', async t => {
  const app = await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage(), { PORT: '8080' })
  t.teardown(() => app.close())
  const spec = (await app.inject('/docs/json')).json()
  t.same(spec.components.securitySchemes, { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } })
  for (const operation of ['getOrderList', 'createOrder', 'updateOrderStatus']) {
    t.same(spec.paths[`/order/${operation}`].post.security, [{ bearerAuth: [] }], operation)
  }
  t.equal(spec.security, undefined, 'security is set per route, not for the whole document')
})

t.test('the auth example answers 401 without a token', async t => {
  const app = await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage())
  t.teardown(() => app.close())
  const response = await app.inject({ method: 'POST', url: '/order/getOrderList', payload: {} })
  t.equal(response.statusCode, 401)
  t.equal(response.json().code, 'FST_JWT_NO_AUTHORIZATION_IN_HEADER')
})

t.test('the auth example scopes a customer to their own orders and lets staff see all', async t => {
  const app = await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage())
  t.teardown(() => app.close())
  const as = (claims: object) => ({ authorization: `Bearer ${app.jwt.sign(claims)}` })
  const customer = as({ sub: 'cus_42' })
  const other = as({ customerId: 'cus_7' })
  const admin = as({ sub: 'staff_1', admin: true })
  const post = (operation: string, headers: Record<string, string>, payload: object) =>
    app.inject({ method: 'POST', url: `/order/${operation}`, headers, payload })

  const mine = (await post('createOrder', customer, orderBody({ customerId: 'cus_42' }))).json()
  const theirs = (await post('createOrder', other, orderBody({ customerId: 'cus_7' }))).json()
  t.equal(mine.customerId, 'cus_42')
  t.equal(theirs.customerId, 'cus_7', 'a customerId claim is the scope too')

  const forOther = await post('createOrder', customer, orderBody({ customerId: 'cus_7' }))
  t.equal(forOther.statusCode, 403)
  t.equal(forOther.json().code, 'ORDER_FORBIDDEN')

  t.same((await post('getOrderList', customer, {})).json().items.map((order: { id: string }) => order.id), [mine.id])
  t.equal((await post('getOrderList', admin, {})).json().items.length, 2)

  const pay = await post('updateOrderStatus', customer, { id: mine.id, status: 'paid' })
  t.equal(pay.statusCode, 403, 'a customer may not mark an order paid')
  const cancelTheirs = await post('updateOrderStatus', customer, { id: theirs.id, status: 'cancelled' })
  t.equal(cancelTheirs.statusCode, 404, 'another customer\'s order is not revealed')
  t.equal(cancelTheirs.json().code, 'ORDER_NOT_FOUND')
  const cancel = await post('updateOrderStatus', customer, { id: mine.id, status: 'cancelled' })
  t.equal(cancel.json().status, 'cancelled')
  const ship = await post('updateOrderStatus', admin, { id: theirs.id, status: 'paid' })
  t.equal(ship.json().status, 'paid', 'staff are unrestricted')

  const anonymous = await post('getOrderList', as({ admin: false }), {})
  t.equal(anonymous.statusCode, 403, 'a token naming no customer is denied')
})

t.test('the auth example serves changeOrder: a customer may cancel a line of their order before shipping, and nothing else; staff may record a payment', async t => {
  const app = await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage())
  t.teardown(() => app.close())
  const as = (claims: object) => ({ authorization: `Bearer ${app.jwt.sign(claims)}` })
  const customer = as({ sub: 'cus_42' })
  const admin = as({ sub: 'staff_1', admin: true })
  const post = async (operation: string, headers: Record<string, string>, payload: object) => {
    const response = await app.inject({ method: 'POST', url: `/order/${operation}`, headers, payload })
    return { status: response.statusCode, body: response.json() }
  }
  const order = (await post('createOrder', customer, orderBody({ customerId: 'cus_42', items: [{ sku: 'MUG', quantity: 2, unitPrice: 1250 }] }))).body
  const cancelled = await post('changeOrder', customer, { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] })
  t.equal(cancelled.status, 200)
  t.match(cancelled.body, { total: 1250, items: [{ cancelled: 1 }] })
  const price = await post('changeOrder', customer, { id: order.id, actions: [{ type: 'setUnitPrice', index: 0, unitPrice: 0 }] })
  t.match(price, { status: 403, body: { code: 'ORDER_FORBIDDEN', message: /customers may not setUnitPrice/ } })
  const payment = await post('changeOrder', customer, { id: order.id, actions: [{ type: 'recordPayment', amount: 1250, reference: 'pi_fake' }] })
  t.equal(payment.status, 403, 'a customer cannot record a payment')
  const paid = await post('changeOrder', admin, { id: order.id, actions: [{ type: 'recordPayment', amount: 1250, reference: 'pi_1' }] })
  t.match(paid.body, { paid: 1250, balance: 0, payments: [{ by: 'staff_1' }] })
  await post('updateOrderStatus', admin, { id: order.id, status: 'paid' })
  await post('updateOrderStatus', admin, { id: order.id, status: 'shipped' })
  const late = await post('changeOrder', customer, { id: order.id, actions: [{ type: 'cancelItem', index: 0, quantity: 1 }] })
  t.match(late, { status: 409, body: { code: 'ORDER_CHANGE_REFUSED' } }, 'not once the order has shipped')
})

t.test('the auth example confines staff of a store to its orders, and signs their moves with their id', async t => {
  const app = await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage())
  t.teardown(() => app.close())
  const as = (claims: object) => ({ authorization: `Bearer ${app.jwt.sign(claims)}` })
  const euStaff = as({ sub: 'staff_7', store: 'eu' })
  const admin = as({ sub: 'staff_1', admin: true })
  const post = async (operation: string, headers: Record<string, string>, payload: object) => {
    const response = await app.inject({ method: 'POST', url: `/order/${operation}`, headers, payload })
    return { status: response.statusCode, body: response.json() }
  }
  const eu = await post('createOrder', euStaff, orderBody())
  t.equal(eu.body.store, 'eu', 'an order staff create goes into their store')
  const us = await post('createOrder', admin, orderBody({ store: 'us' }))
  t.same((await post('getOrderList', euStaff, {})).body.items.map((order: { id: string }) => order.id), [eu.body.id])
  t.equal((await post('updateOrderStatus', euStaff, { id: us.body.id, status: 'paid' })).status, 404, 'another store\'s order is not revealed')
  t.equal((await post('createOrder', euStaff, orderBody({ store: 'us' }))).status, 403)
  const paid = await post('updateOrderStatus', euStaff, { id: eu.body.id, status: 'paid', reason: 'bank transfer received' })
  const shipped = await post('updateOrderStatus', admin, { id: eu.body.id, status: 'shipped' })
  t.equal(paid.status, 200)
  t.same(shipped.body.statusHistory.map(({ status, by }: { status: string, by?: string }) => [status, by]),
    [['pending', 'staff_7'], ['paid', 'staff_7'], ['shipped', 'staff_1']], 'who moved it, at every step')
  t.equal((await post('getOrderList', as({ store: 'eu' }), {})).status, 403, 'a staff token naming no one is denied')
})

t.test('the auth example rate limits the order routes', async t => {
  const app = await buildAuthServer({ logger: false }, 'test secret', exampleMemoryStorage())
  t.teardown(() => app.close())
  const headers = { authorization: `Bearer ${app.jwt.sign({ sub: 'cus_42' })}` }
  const statuses = []
  for (let i = 0; i < 101; i++) {
    statuses.push((await app.inject({ method: 'POST', url: '/order/getOrderList', headers, payload: {} })).statusCode)
  }
  t.equal(statuses.filter(status => status === 200).length, 100)
  t.equal(statuses.at(-1), 429)
})

t.test('the webhooks example delivers every event to its receiver, which verifies the signature', async t => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  const { app, received } = await buildWebhookServer(secret, { logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  startWebhook(app, `${address}/webhook-receiver`, secret)
  const order = await app.orders.create(orderBody())
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  const { items } = await app.orders.listEvents()
  await eventually('both events are received', () => received.length === 2)
  t.same(received, items.map(event => event.id), 'in feed order')
  const forged = await app.inject({ method: 'POST', url: '/webhook-receiver', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(forged.statusCode, 401, 'an unsigned request is refused')
  t.same((await app.inject({ method: 'GET', url: '/webhook-dead-letters' })).json(), { items: [] }, 'nothing set aside')
})

t.test('the webhooks example shows the events its receiver refused for good, and sends them again', async t => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  const { app } = await buildWebhookServer(secret, { logger: false }, exampleMemoryStorage())
  t.teardown(() => app.close())
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  // A receiver that is not there, and no delay left after the first attempt: set aside at once.
  startWebhook(app, `${address}/nowhere`, secret, { schedule: [] })
  const order = await app.orders.create(orderBody())
  let letters: Array<{ event: { id: string, order: { id: string } }, attempts: number, error: string }> = []
  await eventually('the event is set aside', async () => {
    letters = (await app.inject({ method: 'GET', url: '/webhook-dead-letters' })).json().items
    return letters.length === 1
  })
  t.match(letters, [{ event: { order: { id: order.id } }, attempts: 1, error: /\/nowhere: the receiver answered HTTP 404$/ }])
  const after = (await app.inject({ method: 'GET', url: `/webhook-dead-letters?after=${letters[0]!.event.id}` })).json()
  t.same(after, { items: [] }, 'the next page')
  t.same((await app.inject({ method: 'POST', url: '/webhook-dead-letters/redeliver' })).json(), { count: 1 })
})
