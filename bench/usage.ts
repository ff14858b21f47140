// The benchmark's command line, as `npm run bench -- --help` prints it.
export const USAGE = `Usage: npm run bench -- [options]
  --duration <s>     seconds of load per server and round (default 2)
  --rounds <n>       alternating rounds per route, A B then B A (default 10)
  --warmup <s>       seconds of load per server before the rounds (default 2)
  --connections <n>  concurrent connections (default 10)
  --storage <name>   also load the plugin on pglite, postgres or mysql, against the same job
                     hand-written with SQL (pg or mysql2; repeatable; default: pglite when
                     lib/storage/postgres/ exists, postgres too when DATABASE_URL is set, mysql
                     when MYSQL_URL is set and lib/storage/mysql/ exists; mysql without MYSQL_URL
                     is mysql://root@127.0.0.1:3306/test)
  --memory-only      only the memory storage and the baseline
  --route <name>     only this route: getOrderList or createOrder (repeatable; default both)
  --reference        every createOrder body carries a reference of its own (unique per customer
                     in every server: the plugin's index and the hand-written one)
  --store <where>    also load the plugin on each database storage with its orders in a store, in
                     tables of its own, and report its ratio to the plugin without: "scope" (authorize
                     gives { store: 'eu' }) or "body" (createOrder sends "store":"eu", getOrderList
                     filters by it)
  --only <part>      http (req/s), request-work (CPU µs per call of the rules' create and list
                     on memory against the same job by hand, in process), custom-fields
                     (createOrder with custom fields against without,
                     memory storage, and the same pair on bare Fastify), store (page cost and heap
                     per order), feed (events read per second, subscription latency), stream
                     (an event's latency to each of 10 and 1,000 open event streams, and the feed
                     reads they cost; run only when asked for) or soak
                     (events under load while PostgreSQL kills connections; needs DATABASE_URL) or
                     scale-pg (page cost at 10,000 and 1,000,000 orders with a skewed spread, on the
                     server at DATABASE_URL, else PGlite) or scale-mysql (the same on MySQL, page
                     cost at 10,000, 100,000 and 1,000,000 orders) or webhooks (delivery rate and latency to
                     a local receiver, and a backlog to a receiver taking 50 ms with concurrency 32)
                     or upgrade-steps (each upgrade statement timed on 1,000,000 orders; needs
                     DATABASE_URL) or telemetry (ns per telemetry call, and req/s of the three
                     routes without @opentelemetry/api, with it and no SDK, with an SDK that
                     drops what it exports, and with that SDK in use while the plugin reports
                     nothing; memory and each --storage) or guards (updateOrderStatus with one
                     guard against none, memory and each --storage), changes (a changeOrder of two
                     actions against updateOrderStatus, and createOrder, getOrderList and
                     updateOrderStatus with changes on against off; memory and each --storage) or
                     change-storage (the storage's replace of a change of two actions with its claim
                     against a move's, each --storage) or instructions (instructions per request
                     counted by valgrind's callgrind, which other work on the machine does not move:
                     createOrder and getOrderList of the plugin on memory against bare Fastify, the
                     three routes with changes on against off, a change of two actions against a
                     move; about 20 minutes) or desk (the desk's list drawn over 100 and 1,000,000
                     orders on PostgreSQL, a move from Confirm to the updated page, in Chromium; the
                     three routes with the desk on against off); default all but soak, desk, scale-pg, scale-mysql,
                     upgrade-steps, change-storage and instructions
  --quick            1 s rounds, 2 rounds, 1 s warmup, stores of 2k and 20k orders, smaller feeds
  --source           load the plugin from lib/ through tsx instead of building dist/ first
  --profile          run the HTTP servers under --cpu-prof and print their top self-time frames
                     (profiles/<server>)`
