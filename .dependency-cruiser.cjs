/**
 * Architecture rules: the domain stays pure and AWS-free; only adapters hold SDK clients.
 * Cruised: functions lib infra events bench test scripts (see `lint:deps` in package.json).
 */
/**
 * lib/ is one folder per concept: domain code and use cases (no suffix), ports (`*.port.ts`),
 * AWS adapters (`*.adapter.ts`) and in-memory fakes for tests (`*.fake.ts`). Pure: every lib
 * file but adapters and fakes.
 */
const PURE = '^(lib/(?!.*\\.(adapter|fake)\\.ts$)|events/)';
const ADAPTERS = '^lib/.*\\.adapter\\.ts$';
const FAKES = '\\.fake\\.ts$';
/** Production code: bundled into the Lambda functions. infra/ runs at deploy time (aws-cdk-lib is a dev dependency). */
const PRODUCTION = '^(functions|lib|events)/';
/** Build scripts that live beside the code they generate and write files. */
const BUILD_SCRIPTS = '^events/generate-schemas\\.ts$';
module.exports = {
  forbidden: [
    {
      name: 'domain-no-aws-sdk',
      comment:
        'Domain, use cases, ports (*.port.ts) and contracts must not import an AWS SDK, CDK or Powertools: put it in an *.adapter.ts.',
      severity: 'error',
      from: { path: PURE },
      to: { path: '(^|/)node_modules/(@aws-sdk|@smithy|aws-cdk-lib|@aws-lambda-powertools|@middy)/' },
    },
    {
      name: 'domain-no-adapters-or-handlers',
      comment:
        'Domain code depends on ports, never on adapters (*.adapter.ts), fakes (*.fake.ts), handlers, the CDK app or the local stack.',
      severity: 'error',
      from: { path: PURE },
      to: { path: `${ADAPTERS}|${FAKES}|^(functions/|infra/)` },
    },
    {
      name: 'ports-only-types-and-domain',
      comment:
        'A port (*.port.ts) names what a use case needs: it imports domain types and other ports, never an SDK, an adapter or a fake.',
      severity: 'error',
      from: { path: '\\.port\\.ts$' },
      to: { path: `${ADAPTERS}|${FAKES}|(^|/)node_modules/` },
    },
    {
      name: 'fakes-only-in-tests',
      comment:
        'In-memory fakes (*.fake.ts) stand in for adapters in tests, benchmarks and the local stack only: production code never imports one.',
      severity: 'error',
      from: { path: '^(functions|lib|events|infra)/', pathNot: `${FAKES}|^infra/local/` },
      to: { path: FAKES },
    },
    {
      name: 'lib-no-handlers-or-infra',
      comment: 'lib/ is used by handlers and infra, not the other way round.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(functions/|infra/)' },
    },
    {
      name: 'handlers-stay-apart',
      comment: 'A handler does not import another handler.',
      severity: 'error',
      from: { path: '^functions/([^/]+)/' },
      to: { path: '^functions/', pathNot: '^functions/$1/' },
    },
    {
      name: 'domain-no-io',
      comment:
        'Pure code does no file, network or process I/O: it goes through a port (*.port.ts) implemented in an *.adapter.ts or infra/local.',
      severity: 'error',
      from: { path: PURE, pathNot: BUILD_SCRIPTS },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|http|https|http2|net|tls|dgram|child_process|cluster|worker_threads)$',
      },
    },
    {
      name: 'production-no-dev-dependencies',
      comment:
        'Code bundled into a function must not need a devDependency at run time (type-only imports are erased and allowed).',
      severity: 'error',
      from: { path: PRODUCTION, pathNot: BUILD_SCRIPTS },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'production-no-tests-or-bench',
      comment:
        'Functions, lib, events and infra do not import test helpers or benchmarks; tests and benchmarks import them.',
      severity: 'error',
      from: { path: '^(functions|lib|events|infra)/' },
      to: { path: '^(test|bench)/' },
    },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    exclude: { path: '(^|/)(cdk\\.out|\\.local)/' },
  },
};
