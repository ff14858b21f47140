// The plugin under load: Fastify with fastify-order on the storage named by BENCH_STORAGE.
import Fastify from 'fastify'
import orderPlugin from '../../lib/index.js'
import { openStorage, type StorageName } from '../storages.js'
import { serve } from './serve.js'

const { storage } = await openStorage((process.env.BENCH_STORAGE ?? 'memory') as StorageName)
const app = Fastify()
await app.register(orderPlugin, { storage })
await serve(app)
