/** `ip -j addr` is a JSON array like `ip -j route`; the same element scanner serves both. */
export { scanJsonArray, type JsonArrayScan, type JsonPosition } from '../iproute/json.js';
