import {
  canonicalJson,
  compareNode,
  compareWorkflow,
  expectedValue,
  firstDifference,
  isItemList,
  type N8nReference,
  type OurStep,
} from '../../../scripts/lib/n8nParity';
import { runnableOffline } from '../../../scripts/lib/n8nCorpus';
import { forN8nImport, nodesFromRunData } from '../../../scripts/lib/n8nReference';

const step = (nodeId: string, output: unknown, status = 'succeeded'): OurStep => ({ nodeId, status, output });
const record = (...outputs: unknown[][]) => ({ runs: [{ outputs }] });

describe('n8n parity: comparing values', () => {
  it('ignores key order and undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: [2, undefined] } })).toEqual({ a: { c: [2, null] }, b: 1 });
    expect(firstDifference({ a: 1, b: 2 }, { b: 2, a: 1 })).toBeNull();
  });

  it('names the first differing path, with types told apart', () => {
    expect(firstDifference({ a: { b: [1, 2] } }, { a: { b: [1, 3] } })).toBe('$.a.b[1]: n8n has 2, we have 3');
    expect(firstDifference({ n: 12 }, { n: '12' })).toBe('$.n: n8n has 12, we have "12"');
    expect(firstDifference({ x: 1 }, {})).toBe('$.x: missing here (n8n has 1)');
    expect(firstDifference({}, { 'a b': true })).toBe('$["a b"]: not in n8n\'s item (we have true)');
    expect(firstDifference([1], [1, 2])).toBe('$: n8n has 1 elements, we have 2');
    expect(firstDifference(null, {})).toBe('$: n8n has null, we have {}');
  });

  it('maps items to one value as extflow documents: none → null, one → its json, several → an array', () => {
    expect(expectedValue([])).toBeNull();
    expect(expectedValue([{ a: 1 }])).toEqual({ a: 1 });
    expect(expectedValue([{ a: 1 }, { a: 2 }])).toEqual([{ a: 1 }, { a: 2 }]);
  });
});

describe('n8n parity: comparing a node', () => {
  it('takes every output and run together (an If emits on its true or false output)', () => {
    const ifNode = { runs: [{ outputs: [[], [{ ok: false }]] }] };
    expect(compareNode('If', ifNode, step('if', { ok: false })).equal).toBe(true);
    const looped = { runs: [{ outputs: [[{ i: 1 }]] }, { outputs: [[{ i: 2 }]] }] };
    expect(compareNode('Loop', looped, step('loop', [{ i: 1 }, { i: 2 }])).equal).toBe(true);
  });

  it('a one-item node must not output a one-element array', () => {
    const c = compareNode('Set', record([{ a: 1 }]), step('set', [{ a: 1 }]));
    expect(c).toMatchObject({ equal: false, nodeId: 'set', detail: '$: n8n has {"a":1}, we have [{"a":1}]' });
  });

  it('a missing or skipped step is equal only when n8n emitted nothing', () => {
    expect(compareNode('Empty', record([]), undefined).equal).toBe(true);
    expect(compareNode('Empty', record([]), step('empty', null, 'skipped')).equal).toBe(true);
    expect(compareNode('Set', record([{ a: 1 }]), undefined)).toMatchObject({
      equal: false,
      nodeId: null,
      detail: 'n8n emitted 1 item(s); no step of ours ran',
    });
  });
});

describe('n8n parity: comparing a run', () => {
  const reference: N8nReference = {
    status: 'success',
    error: null,
    nodes: { Start: record([{}]), Set: record([{ a: 1 }]), Note: record([]) },
  };
  const steps: Record<string, OurStep> = { Start: step('start__item', {}), Set: step('set', { a: 1 }) };

  it('is equal when every node matches and both runs succeeded', () => {
    const c = compareWorkflow(reference, 'succeeded', (name) => steps[name]);
    expect(c).toMatchObject({ equal: true, statusDiffers: false, firstDifference: null });
    expect(c.nodes.map((n) => n.node)).toEqual(['Start', 'Set', 'Note']);
  });

  it('reports the first differing node, and leaves ignored nodes out', () => {
    const c = compareWorkflow(reference, 'succeeded', (name) => (name === 'Set' ? step('set', { a: 2 }) : steps[name]), new Set(['Note']));
    expect(c.equal).toBe(false);
    expect(c.firstDifference).toBe('Set: $.a: n8n has 1, we have 2');
    expect(c.nodes.map((n) => n.node)).toEqual(['Start', 'Set']);
  });

  it('a run that failed on one side only differs, whatever the nodes say', () => {
    const failed = compareWorkflow(reference, 'failed', (name) => steps[name]);
    expect(failed).toMatchObject({ equal: false, statusDiffers: true, firstDifference: 'n8n succeeded, our run failed' });
    const bothFailed = compareWorkflow({ ...reference, status: 'error', error: 'boom' }, 'failed', (name) => steps[name]);
    expect(bothFailed).toMatchObject({ equal: true, statusDiffers: false });
  });
});

describe('n8n parity: which exports run offline', () => {
  const manual = { name: 'Go', type: 'n8n-nodes-base.manualTrigger', parameters: {} };
  const set = { name: 'Set', type: 'n8n-nodes-base.set', parameters: { values: { string: [{ name: 'a', value: 'x' }] } } };
  const connected = { Go: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } };

  it('takes a connected manual trigger followed by offline nodes', () => {
    expect(runnableOffline({ nodes: [manual, set], connections: connected })).toEqual({ ok: true });
  });

  it('refuses what would not give the same items on every offline run', () => {
    const reason = (wf: unknown) => {
      const r = runnableOffline(wf);
      return r.ok ? 'ok' : r.reason;
    };
    expect(reason({ nodes: [set], connections: {} })).toBe('no manual trigger');
    expect(reason({ nodes: [manual, set], connections: {} })).toBe('the manual trigger is connected to nothing');
    // Connections keyed by node id (a rewritten export) leave the trigger unconnected in n8n too.
    expect(reason({ nodes: [manual, set], connections: { 'f3b1-id': connected.Go } })).toBe('the manual trigger is connected to nothing');
    const http = { name: 'Set', type: 'n8n-nodes-base.httpRequest', parameters: {} };
    expect(reason({ nodes: [manual, http], connections: connected })).toBe(
      'node type n8n-nodes-base.httpRequest needs the network or time',
    );
    const credentialed = { ...set, type: 'n8n-nodes-base.noOp', credentials: { openAiApi: { id: '1', name: 'OpenAI' } } };
    expect(reason({ nodes: [manual, credentialed], connections: connected })).toBe('a node needs a credential');
    const clock = { ...set, parameters: { value: '={{ $now.toISO() }}' } };
    expect(reason({ nodes: [manual, clock], connections: connected })).toBe('reads $now (differs on every run)');
    expect(reason([])).toBe('not a workflow export');
  });

  it('ignores disabled nodes and sticky notes', () => {
    const disabledHttp = { name: 'Call', type: 'n8n-nodes-base.httpRequest', disabled: true, parameters: {} };
    const note = { name: 'Note', type: 'n8n-nodes-base.stickyNote', parameters: { content: '$now' } };
    expect(runnableOffline({ nodes: [manual, set, disabledHttp, note], connections: connected })).toEqual({ ok: true });
  });
});

describe('n8n parity: what n8n is given and what is kept of its run', () => {
  it('imports the export under its own id, inactive, without pinned data, tags or notes', () => {
    const exported = {
      id: 'shared-id',
      name: '',
      active: true,
      tags: [{ id: 't1', name: 'x' }],
      pinData: { Set: [{ json: { a: 1 } }] },
      nodes: [{ name: 'Set', type: 'n8n-nodes-base.set', notes: 'CAP_RESULTS_LENGTH=1', parameters: {} }],
      connections: {},
    };
    expect(forN8nImport(exported, 'svcref000001')).toEqual({
      id: 'svcref000001',
      name: 'svcref000001',
      active: false,
      nodes: [{ name: 'Set', type: 'n8n-nodes-base.set', parameters: {} }],
      connections: {},
    });
  });

  it("keeps each item's json per output and run, and a node's error", () => {
    const runData = {
      If: [{ data: { main: [[{ json: { a: 1 }, pairedItem: { item: 0 } }], null] } }],
      Code: [{ error: { message: 'boom' } }],
    };
    expect(nodesFromRunData(runData)).toEqual({
      If: { runs: [{ outputs: [[{ a: 1 }], []] }] },
      Code: { runs: [{ outputs: [], error: 'boom' }] },
    });
  });
});

describe("n8n parity: our item lists (issue 29's data model)", () => {
  it('compares an item list item for item by json, pairedItem and binary aside', () => {
    const items = [{ json: { a: 1 }, pairedItem: { item: 0 } }, { json: { a: 2 } }];
    expect(isItemList(items)).toBe(true);
    expect(compareNode('Code', record([{ a: 1 }, { a: 2 }]), step('code', items)).equal).toBe(true);
    expect(compareNode('Code', record([{ a: 1 }]), step('code', [{ json: { a: 1 }, pairedItem: { item: 0 } }])).equal).toBe(true);
    expect(compareNode('Code', record([{ a: 1 }, { a: 3 }]), step('code', items)).detail).toBe('$[1].a: n8n has 3, we have 2');
    expect(compareNode('Code', record([]), step('code', [])).equal).toBe(true);
  });

  it('does not take a plain array of objects for an item list', () => {
    expect(isItemList([{ a: 1 }])).toBe(false);
    expect(compareNode('Set', record([{ a: 1 }, { a: 2 }]), step('set', [{ a: 1 }, { a: 2 }])).equal).toBe(true);
  });
});
