// Event ids: random version 4 UUIDs, spelled as crypto.randomUUID spells them, never repeated.
import t from 'tap'
import { isEventId, newEventId } from '../../lib/feed/events.js'

t.test('an event id is a version 4 UUID in lower case, as PostgreSQL\'s uuid column reads it back', async t => {
  const ids = Array.from({ length: 600 }, newEventId)
  t.same(ids.filter(id => !/^[\da-f]{8}-[\da-f]{4}-4[\da-f]{3}-[89ab][\da-f]{3}-[\da-f]{12}$/.test(id)), [])
  t.ok(ids.every(isEventId), 'and the feed takes it as an event id')
})

t.test('event ids do not repeat across batches of random bytes', async t => {
  const ids = new Set(Array.from({ length: 5000 }, newEventId))
  t.equal(ids.size, 5000)
})
