/**
 * The rules the tree keeps, checked by `npm test` (`npm run depcruise`), type-only imports included.
 * test/unit/dependency-rules.test.ts shows each rule failing on a tree made to break it.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle (type-only imports count): one of the two files is in the wrong room.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-not-to-functions-or-infra',
      severity: 'error',
      comment: 'shared/ is what functions and infra build on; it never imports them.',
      from: { path: '^shared/' },
      to: { path: '^(functions|infra)/' },
    },
    {
      name: 'use-case-not-to-adapter',
      severity: 'error',
      comment:
        'A use case declares its ports (…Store, in its ports.ts) and never imports an adapter, even for a type. ' +
        'The audit is the exception: it reads the table itself (docs/decisions/double-entry-ledger.md).',
      from: {
        path: '^shared/[^/]+/',
        pathNot: ['^shared/[^/]+/dynamodb/', '^shared/dynamodb/', '^shared/wallet/audit/'],
      },
      to: { path: '^shared/[^/]+/dynamodb/', pathNot: '^shared/dynamodb/' },
    },
    {
      name: 'local-only-stays-local',
      severity: 'error',
      comment:
        'infra/local/ is the local stand-in for AWS: what ships (shared/, functions/) never imports it.',
      from: { path: '^(shared|functions)/' },
      to: { path: '^infra/local/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|cdk\\.out)/' },
    // swc reads TypeScript 7 sources (tsc's API is not published for 7) and keeps type-only imports,
    // so a cycle through `import type` is a cycle too (test/unit/dependency-rules.test.ts).
    parser: 'swc',
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
