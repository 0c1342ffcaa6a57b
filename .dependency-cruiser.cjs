/** Architecture rules: the domain stays pure and AWS-free; only adapters hold SDK clients. */
const PURE = '^(lib/(domain|use-cases|offline-model)/|lib/ports\\.ts$|events/)';
module.exports = {
  forbidden: [
    {
      name: 'domain-no-aws-sdk',
      comment: 'Domain, use cases, ports and contracts must not import an AWS SDK, CDK or Powertools: put it in lib/adapters.',
      severity: 'error',
      from: { path: PURE },
      to: { path: '(^|/)node_modules/(@aws-sdk|@smithy|aws-cdk-lib|@aws-lambda-powertools|@middy)/' },
    },
    {
      name: 'domain-no-adapters-or-handlers',
      comment: 'Domain code depends on ports, never on adapters, handlers, the CDK app or the local stack.',
      severity: 'error',
      from: { path: PURE },
      to: { path: '^(lib/adapters/|functions/|infra/)' },
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
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    exclude: { path: '(^|/)(cdk\\.out|\\.local)/' },
  },
};
