// Coverage counts the library only: examples, fixtures and README snippets are exercised, not measured.
export default () => ['lib/**/*.ts']
