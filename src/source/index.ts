export * from '../../grammars/common/source.js';
export * from '../../grammars/common/yaml-keys.js';
