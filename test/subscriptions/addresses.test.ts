// Public addresses only: every kind of address that is not public unicast is named, and a pinned POST connects to the address it checked.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo, LookupFunction } from 'node:net'
import t from 'tap'
import { AddressRefusedError, literalKind, nonPublicKind, postPinned, publicLookup, type Resolve } from '../../lib/subscriptions/addresses.js'

t.test('every address that is not public unicast is named by its kind; public ones pass', async t => {
  const refused: Array<[string, RegExp]> = [
    ['0.0.0.0', /unspecified/], ['0.1.2.3', /unspecified/], ['10.0.0.1', /private/], ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/], ['127.0.0.1', /loopback/], ['127.255.0.9', /loopback/], ['169.254.169.254', /link-local.*metadata/],
    ['172.16.0.1', /private/], ['172.31.255.255', /private/], ['192.0.0.8', /reserved/], ['192.0.2.1', /documentation/],
    ['192.168.1.1', /private/], ['198.18.0.1', /benchmarking/], ['198.51.100.7', /documentation/], ['203.0.113.9', /documentation/],
    ['224.0.0.1', /multicast/], ['239.255.255.250', /multicast/], ['255.255.255.255', /broadcast/], ['240.0.0.1', /reserved/],
    ['::', /unspecified/], ['::1', /loopback/], ['::ffff:127.0.0.1', /loopback/], ['::ffff:7f00:1', /loopback/],
    ['::ffff:169.254.169.254', /link-local/], ['64:ff9b::a9fe:a9fe', /link-local/], ['64:ff9b::10.0.0.1', /private/],
    ['64:ff9b:1::1', /local-use NAT64/], ['2002:7f00:1::1', /loopback/], ['fc00::1', /unique local/], ['fd12:3456::1', /unique local/],
    ['fe80::1', /link-local/], ['fe80::1%eth0', /link-local/], ['febf::1', /link-local/], ['ff02::1', /multicast/],
    ['2001:db8::1', /documentation/], ['2001::1', /Teredo/], ['::127.0.0.1', /outside global unicast/], ['fec0::1', /outside global unicast/],
    ['100::1', /outside global unicast/], ['fe80:0:0:0:0:0:0:1', /link-local/], ['not-an-address', /not an IP address/]
  ]
  for (const [address, kind] of refused) t.match(nonPublicKind(address), kind, address)
  for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e',
    '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2001:4860:4860::8888', '2001:4860:4860:0:0:0:0:8888']) {
    t.equal(nonPublicKind(address), undefined, `${address} is public`)
  }
})

t.test('a URL\'s host is refused as a literal only when it is an IP address that is not public', async t => {
  for (const url of ['http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/']) {
    t.ok(literalKind(new URL(url).hostname), url)
  }
  for (const url of ['http://localhost/', 'https://erp.example/', 'http://8.8.8.8/', 'http://[2606:4700:4700::1111]/']) {
    t.equal(literalKind(new URL(url).hostname), undefined, url)
  }
})

/** Calls `lookup` as net.connect does, with `all` or without. */
function lookupOnce (lookup: LookupFunction, options: { all?: boolean, family?: number }) {
  return new Promise<{ err: NodeJS.ErrnoException | null, address: unknown, family?: number }>(resolve => {
    lookup('receiver.test', options as never, (err, address, family) => { resolve({ err, address, family }) })
  })
}

t.test('the lookup resolves, refuses unless every address is public, and hands over exactly the addresses it checked', async t => {
  const answers: Record<string, Array<{ address: string, family: number }>> = {
    public: [{ address: '8.8.8.8', family: 4 }, { address: '2001:4860:4860::8888', family: 6 }],
    mixed: [{ address: '8.8.8.8', family: 4 }, { address: '10.0.0.1', family: 4 }],
    none: []
  }
  let answer = 'public'
  const lookup = publicLookup(async () => answers[answer]!)
  t.same(await lookupOnce(lookup, { all: true }), { err: null, address: answers.public, family: undefined })
  t.same(await lookupOnce(lookup, { family: 6 }), { err: null, address: '2001:4860:4860::8888', family: 6 })
  t.same(await lookupOnce(lookup, { family: 0 }), { err: null, address: '8.8.8.8', family: 4 })
  answer = 'mixed'
  const mixed = await lookupOnce(lookup, { all: true })
  t.ok(mixed.err instanceof AddressRefusedError, 'one private address among public ones is refused')
  t.equal(mixed.err?.message, 'the host resolves to a private address (RFC 1918), which addresses: \'public\' refuses')
  answer = 'none'
  t.match(await lookupOnce(lookup, {}), { err: { code: 'ENOTFOUND' } })
  const failing = publicLookup(async () => { throw Object.assign(new Error('queryA ESERVFAIL'), { code: 'ESERVFAIL' }) })
  t.match(await lookupOnce(failing, {}), { err: { code: 'ESERVFAIL' } })
})

t.test('a pinned POST connects to the address the lookup checked, at each delivery, and never to one it refused', async t => {
  const received: Array<{ host?: string, body: string }> = []
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', chunk => { body += chunk })
    request.on('end', () => {
      received.push({ host: request.headers.host, body })
      response.statusCode = request.url === '/gone' ? 410 : 204
      response.end()
    })
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  const { port } = server.address() as AddressInfo
  // A name no DNS knows, answered first with the local receiver, then (a rebinding) with a private address.
  const answers = ['127.0.0.1', '10.0.0.1']
  const resolve: Resolve = async () => [{ address: answers.shift()!, family: 4 }]
  // This test's receiver is local: only 127.0.0.1 counts as allowed here, every other kind is refused.
  const lookup = publicLookup(resolve, address => address === '127.0.0.1' ? undefined : nonPublicKind(address))
  const post = (path: string) => postPinned(new URL(`http://receiver.test:${port}${path}`), { body: '{"ok":true}', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(5000), lookup })
  t.equal(await post('/gone'), 410, 'delivered to the checked address; the answer\'s status comes back')
  t.same(received, [{ host: `receiver.test:${port}`, body: '{"ok":true}' }], 'the host name stays in the request')
  await t.rejects(post('/hooks'), AddressRefusedError, 'resolved again at the next delivery, and refused before any connection')
  t.equal(received.length, 1)
  const refusing = publicLookup(async () => [{ address: '10.0.0.1', family: 4 }])
  await t.rejects(postPinned(new URL('https://receiver.test/hooks'), { body: '{}', headers: {}, signal: AbortSignal.timeout(5000), lookup: refusing }),
    AddressRefusedError, 'https is checked the same way')
})
