import {
  canonicalJson,
  compareNode,
  compareWorkflow,
  expectedValue,
  firstDifference,
  type N8nReference,
  type OurStep,
} from '../../../scripts/lib/n8n-parity';

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
