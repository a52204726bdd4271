export * from '../../grammars/common/format.js';
