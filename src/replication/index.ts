export { GroupDb, FencedError, connectionTrouble, type GroupKeys, type LogRow } from './group-db.js';
export { Leadership, type LeadershipOptions } from './leadership.js';
export { LogFollower, type LogFollowerOptions } from './log-follower.js';
export { PgAppender } from './pg-appender.js';
export * from './limits.js';
