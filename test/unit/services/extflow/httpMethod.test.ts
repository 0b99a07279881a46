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

test('a credential of an HTTP Request mapped again to run per item is listed once', () => {
  const wf = convertExtflowWorkflow({
    id: 'cred-once',
    name: 'Credential once',
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
      { name: 'Split Out', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'xs' } },
      {
        name: 'Call',
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: { url: 'https://api.example.test/x', authentication: 'genericCredentialType', genericAuthType: 'httpHeaderAuth' },
        credentials: { httpHeaderAuth: { id: '1', name: 'Key' } },
      },
    ],
    connections: {
      Start: { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] },
      'Split Out': { main: [[{ node: 'Call', type: 'main', index: 0 }]] },
    },
  } as never);
  expect(wf.nodes.find((n) => n.id === 'call__each')?.type).toBe('loop');
  expect(wf.conversion.credentials).toEqual([{ alias: 'Key', extflowType: 'httpHeaderAuth', type: 'http_header', nodes: ['Call'] }]);
});
