/** Trace → words: the renderers live in src/render/trace/ (this path is kept for the modules that import it). */
export * from './trace/index.js';
