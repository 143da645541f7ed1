/**
 * Load-generation logic shared by the Node driver and the k6 scripts. Pure: no Node or k6 imports,
 * no Node globals, so esbuild can inline it into a k6 bundle.
 */
export * from './goodput.js';
export * from './k6-summary.js';
export * from './payload.js';
export * from './plan.js';
export * from './scale.js';
export * from './sse.js';
export * from './stages.js';
