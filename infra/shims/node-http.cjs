// What bundles get for `node:http` (see NODE_HTTP_ALIAS in infra/bundling.ts): the built-in module
// itself, taken the CommonJS way, so that importing it does not load undici.
module.exports = process.getBuiltinModule('node:http');
