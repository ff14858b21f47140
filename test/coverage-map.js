// Coverage counts the library only: examples, fixtures and README snippets are exercised, not measured.
// The MySQL adapter is measured where its tests run, with a server (MYSQL_URL); without one they say they skipped, and it is not counted.
export default () => process.env.MYSQL_URL
  ? ['lib/**/*.ts']
  : ['lib/*.ts', 'lib/!(storage)/**/*.ts', 'lib/storage/*.ts', 'lib/storage/!(mysql)/**/*.ts']
