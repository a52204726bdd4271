export * from '../../grammars/common/format.js';
export { estimateYamlNodes, YAML_NODE_BUDGET } from '../../grammars/common/json-positions.js';
