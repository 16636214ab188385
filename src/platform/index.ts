export { assert, InvariantError } from './assert.js';
export { reportFault, type FaultSink } from './fault.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
export { createLogger, infoLine, logLinesDropped } from './log.js';
export { LMDB_FILES, makeFilesPrivate, makePrivateDirectory, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.js';
export { lowerThreadPoolPriority, type ThreadPoolPriority } from './thread-priority.js';
export { VERSION } from './version.js';
export * from './units.js';
export * from './limits.js';
