// The plugin under load: Fastify with fastify-order on the storage named by BENCH_STORAGE.
import Fastify from 'fastify'
import { loadPlugin, openStorage, type StorageName } from '../storages.js'
import { serve } from './serve.js'

const { orderPlugin } = await loadPlugin()
const { storage, close } = await openStorage((process.env.BENCH_STORAGE ?? 'memory') as StorageName, { applicationName: process.env.BENCH_APPLICATION_NAME })
const app = Fastify()
app.addHook('onClose', close)
await app.register(orderPlugin, { storage })
await serve(app)
