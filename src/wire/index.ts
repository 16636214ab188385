export * from './records.js';
export * from './subscription.js';
