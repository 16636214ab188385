export { loadConfig, type Config } from './config.js';
export { SHUTDOWN_DEADLINE_MS } from './limits.js';
export { DEMO_CREDITS, seedIfEmpty } from './seed.js';
export { startServer, type Server, type ServerOptions } from './server.js';
export { startReplicatedNode, type ReplicatedNode } from './replicated-node.js';
