export * from '../../grammars/common/source.js';
