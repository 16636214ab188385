export { AbuseLog } from './guards/abuse-log.js';
export { AuthFailureLimiter } from './guards/auth-failures.js';
export { mountAdmin } from './admin/index.js';
export type { AppContext, HttpLimits, Readiness } from './context.js';
export { mountCustomerApi } from './mount.js';
export { buildOpenApi } from './v1/openapi.js';
export { renderAnswer } from './transport/answer.js';
export { closeListenSocket, createApp, listenExclusive, localPort, type ListenSocket, type TemplatedApp } from './transport/uws.js';
export * from './limits.js';
