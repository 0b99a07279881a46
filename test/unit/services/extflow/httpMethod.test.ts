/** HTTP Request's method given in expression mode without placeholders (`=POST`, 10 nodes in the public corpus). */
import { convertExtflowWorkflow } from '../../../../services/extflow/convert';

test.each([
  [1, { requestMethod: '=POST', url: 'https://api.example.test/a' }, 'POST'],
  [4.2, { method: '= get ', url: 'https://api.example.test/a' }, 'GET'],
])('v%s %j → %s', (version, parameters, method) => {
  const wf = convertExtflowWorkflow({
    id: 'method',
    name: 'Method',
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
      { name: 'Call', type: 'n8n-nodes-base.httpRequest', typeVersion: version, parameters },
    ],
    connections: { Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
  } as never);
  expect(wf.conversion.unsupported).toEqual([]);
  expect(wf.nodes.find((n) => n.id === 'call__request')?.config).toMatchObject({ method });
});
