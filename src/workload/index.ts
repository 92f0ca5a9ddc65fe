// The synthetic workload model (spec §4.2–§4.7): pure logic the run engine drives. No I/O, timers
// or wall clock here; random streams and settings are passed in.
export * from './settings.js';
export * from './qos.js';
export * from './keys.js';
export * from './users.js';
export * from './conversation.js';
export * from './prefix.js';
export * from './rag.js';
export * from './request.js';
export * from './queue.js';
export * from './session.js';
