/**
 * Let the test worker's event loop turn between long synchronous steps (generating a 1k-Service
 * cluster, parsing it, linting it). vitest's worker talks to the main process by messages and
 * gives up on an answer after 60 s: on a loaded machine a test that keeps the loop busy for that
 * long fails with `Timeout calling "onTaskUpdate"` although every assertion held. Steps of a few
 * seconds each, with a turn of the loop between them, keep the answers flowing.
 */
import { setImmediate } from 'node:timers/promises';

export const breathe = (): Promise<void> => setImmediate();
