// The plugin under load: Fastify with fastify-order on the storage named by BENCH_STORAGE, with the
// benchmark's custom fields when BENCH_CUSTOM_FIELDS is set.
import Fastify from 'fastify'
import { customFields } from '../custom-fields.js'
import { loadPlugin, openStorage, type StorageName } from '../storages.js'
import { serve } from './serve.js'

const { orderPlugin } = await loadPlugin()
const { storage, close } = await openStorage((process.env.BENCH_STORAGE ?? 'memory') as StorageName, { applicationName: process.env.BENCH_APPLICATION_NAME })
const app = Fastify()
app.addHook('onClose', close)
await app.register(orderPlugin, process.env.BENCH_CUSTOM_FIELDS === undefined ? { storage } : { storage, customFields })
await serve(app)
