/**
 * The external tool's item model, as JavaScript that runs inside code nodes (the sandbox): the
 * converted item nodes (Split Out, Aggregate, Summarize, Sort, Limit, Remove Duplicates, Rename
 * Keys, Item Lists) and the Code / Function nodes take and return the item list
 * `[{ json, binary?, pairedItem? }]` through it. It is source text, not a module, because the
 * sandbox has no module loader: each converted node's source starts with it
 * (`itemNodeSource`). Unit tests compile it with `new Function` (test/unit/services/extflow/).
 *
 * Item linking follows the external tool's engine:
 * - before a node runs, each input item's `pairedItem` becomes `{ item: <its index> }`;
 * - output items that carry no `pairedItem` get one when it is unambiguous: `{ item: 0 }` when
 *   there was one input item, `{ item: i }` when as many items come out as went in; otherwise
 *   none (and the tool's `$('Node').item` cannot follow them);
 * - a `pairedItem` the node sets is never overwritten.
 * Node settings: "execute once" keeps only the first input item; "always output data" turns an
 * empty output into one item `{ json: {} }` paired with every input item; "continue (regular
 * output)" turns a failure into one item `{ json: { error: <message> } }`.
 *
 * Caveat: binary data travels as the tool's metadata objects (`{ data, mimeType, … }`); nothing
 * here reads or writes file contents.
 */
/** Marks the message of an item node's failure bound for its error output. */
export const ITEM_ERROR_START = '[[item-error]]';
export const ITEM_ERROR_END = '[[/item-error]]';

export const ITEM_RUNTIME = String.raw`
var __items = (function () {
  var ERROR_START = '${ITEM_ERROR_START}', ERROR_END = '${ITEM_ERROR_END}';
  var hasOwn = Object.prototype.hasOwnProperty;
  function isObj(v) { return v !== null && typeof v === 'object' && !Array.isArray(v); }
  function fail(message) { var e = new Error(message); e.itemNode = true; throw e; }
  function isItem(v) {
    if (!isObj(v) || !isObj(v.json)) return false;
    for (var k in v) if (hasOwn.call(v, k) && k !== 'json' && k !== 'binary' && k !== 'pairedItem' && k !== 'error' && k !== 'index') return false;
    return true;
  }
  /** A connection's value as the item list: an item list as is, one value as its one item, nothing as none. */
  function toItems(value) {
    var list;
    if (value === undefined || value === null) list = [];
    else if (Array.isArray(value)) list = value.every(isItem) ? value : value.map(function (v) { return { json: isObj(v) ? v : { data: v } }; });
    else list = [{ json: isObj(value) ? value : { data: value } }];
    return list.map(function (it, i) {
      var out = { json: it.json, pairedItem: { item: i } };
      if (it.binary !== undefined) out.binary = it.binary;
      return out;
    });
  }
  /** Items the node returned, in the tool's shapes: items, bare objects, or one of either. */
  function normalize(result) {
    if (result === undefined || result === null) return [];
    var list = Array.isArray(result) ? result : [result];
    var wrapped = list.filter(function (v) { return isObj(v) && hasOwn.call(v, 'json'); }).length;
    if (wrapped > 0 && wrapped < list.length) fail('Inconsistent item format');
    return list.map(function (v) {
      if (wrapped > 0) {
        if (!isObj(v.json)) fail('A returned item has a "json" key that is not an object');
        var it = { json: v.json };
        if (v.binary !== undefined) it.binary = v.binary;
        if (v.pairedItem !== undefined) it.pairedItem = v.pairedItem;
        return it;
      }
      if (!isObj(v)) fail('Code doesn\'t return items properly: return an array of objects');
      return { json: v };
    });
  }
  function pair(out, inCount) {
    for (var i = 0; i < out.length; i++) {
      if (out[i].pairedItem !== undefined) continue;
      if (inCount === 1) out[i].pairedItem = { item: 0 };
      else if (out.length === inCount) out[i].pairedItem = { item: i };
      else break;
    }
    return out;
  }
  function deepEqual(a, b) {
    if (a === b) return true;
    if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return a !== a && b !== b;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    var ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (var i = 0; i < ka.length; i++) if (!hasOwn.call(b, ka[i]) || !deepEqual(a[ka[i]], b[ka[i]])) return false;
    return true;
  }
  function lt(a, b) {
    if (typeof a === 'string' && typeof b === 'string') return a < b;
    return Number(a) < Number(b);
  }
  function pathOf(path) {
    var parts = [];
    String(path).replace(/[^.[\]]+|\[(?:(-?\d+)|(["'])((?:(?!\2)[^\\]|\\.)*?)\2)\]/g, function (m, num, q, quoted) {
      parts.push(num !== undefined ? num : q ? quoted : m);
      return m;
    });
    return parts;
  }
  function get(obj, path) {
    if (isObj(obj) && hasOwn.call(obj, path)) return obj[path];
    var parts = pathOf(path), cur = obj;
    for (var i = 0; i < parts.length; i++) {
      if (cur === null || cur === undefined || typeof cur !== 'object' || !hasOwn.call(cur, parts[i])) return undefined;
      cur = cur[parts[i]];
    }
    return cur;
  }
  function unsafe(key) { return key === '__proto__' || key === 'constructor' || key === 'prototype'; }
  function set(obj, path, value) {
    var parts = pathOf(path), cur = obj;
    for (var i = 0; i < parts.length; i++) if (unsafe(parts[i])) return;
    for (var j = 0; j < parts.length - 1; j++) {
      if (cur[parts[j]] === null || typeof cur[parts[j]] !== 'object') cur[parts[j]] = /^\d+$/.test(parts[j + 1]) ? [] : {};
      cur = cur[parts[j]];
    }
    cur[parts[parts.length - 1]] = value;
  }
  function unset(obj, path) {
    var parts = pathOf(path), cur = obj;
    for (var i = 0; i < parts.length - 1; i++) {
      if (cur === null || typeof cur !== 'object') return;
      cur = cur[parts[i]];
    }
    if (cur !== null && typeof cur === 'object') delete cur[parts[parts.length - 1]];
  }
  function read(dot, obj, field) { return dot ? get(obj, field) : isObj(obj) && hasOwn.call(obj, field) ? obj[field] : undefined; }
  function copy(v) { return v === undefined ? v : JSON.parse(JSON.stringify(v)); }
  /** A list of field names: "a, b" or the older [{ fieldName }] collections. */
  function fields(value, label) {
    if (Array.isArray(value)) return value.map(function (f) { return isObj(f) ? String(f.fieldName || '').trim() : String(f).trim(); }).filter(Boolean);
    if (isObj(value)) return fields(value.fields || value.field || [], label);
    if (typeof value !== 'string') return [];
    return value.split(',').map(function (f) { return f.trim(); }).filter(Boolean);
  }
  function flattenKeys(obj, prefix, out) {
    if (obj === null || typeof obj !== 'object') { out[prefix.join('.')] = true; return out; }
    Object.keys(obj).forEach(function (k) { flattenKeys(obj[k], prefix.concat([k]), out); });
    return out;
  }

  var ops = {};

  ops.splitOut = function (items, p) {
    var out = [];
    var dot = !(p.options && p.options.disableDotNotation);
    var include = p.include || 'noOtherFields';
    var split = fields(p.fieldToSplitOut).map(function (f) { return f.replace(/^\$json\./, ''); });
    var dest = fields((p.options && p.options.destinationFieldName) || '');
    if (split.length === 0) fail('No field to split out');
    if (dest.length && dest.length !== split.length)
      fail('If multiple fields to split out are given, the same number of destination fields must be given');
    var multi = split.length > 1;
    items.forEach(function (it, i) {
      var item = Object.assign({}, it.json);
      var rows = [];
      split.forEach(function (field, e) {
        var destination = dest[e] || '';
        var list;
        if (field === '$binary') {
          list = Object.keys(it.binary || {}).map(function (k) { var o = {}; o[k] = it.binary[k]; return o; });
        } else {
          list = read(dot, item, field);
          if (list === undefined) list = [];
          if (typeof list !== 'object' || list === null) list = [list];
          if (!Array.isArray(list)) list = Object.keys(list).map(function (k) { return list[k]; });
        }
        list.forEach(function (element, k) {
          if (rows[k] === undefined) rows[k] = { json: {}, pairedItem: { item: i } };
          var name = destination || field;
          if (field === '$binary') {
            rows[k].binary = rows[k].binary || {};
            var key = Object.keys(element)[0];
            rows[k].binary[key] = element[key];
          } else if (isObj(element) || Array.isArray(element) ? include === 'noOtherFields' && destination === '' && !multi : false) {
            rows[k] = { json: Object.assign({}, rows[k].json, element), pairedItem: { item: i } };
          } else {
            rows[k].json[name] = element;
          }
        });
      });
      rows.forEach(function (row) {
        if (row === undefined) return;
        if (include === 'allOtherFields') {
          var rest = copy(item);
          split.forEach(function (f) { if (dot) unset(rest, f); else delete rest[f]; });
          row.json = Object.assign(rest, row.json);
        } else if (include === 'selectedOtherFields') {
          var keep = fields(p.fieldsToInclude);
          if (!keep.length) fail('No fields specified');
          keep.forEach(function (f) { row.json[f] = read(dot, item, f); });
        }
        if (p.options && p.options.includeBinary && it.binary && !row.binary) row.binary = it.binary;
        out.push(row);
      });
    });
    return out;
  };

  ops.aggregate = function (items, p) {
    var o = p.options || {};
    if ((p.aggregate || 'aggregateIndividualFields') === 'aggregateIndividualFields') {
      var dot = !o.disableDotNotation;
      var list = (p.fieldsToAggregate && p.fieldsToAggregate.fieldToAggregate) || [];
      if (!list.length) fail('No fields specified');
      var json = {}, values = {}, used = [];
      list.forEach(function (f) {
        var input = String(f.fieldToAggregate || '');
        var name = f.renameField ? f.outputFieldName : input;
        if (used.indexOf(name) >= 0) fail("The '" + name + "' output field is used more than once");
        used.push(name);
        var outName = f.outputFieldName ? f.outputFieldName : dot && input.indexOf('.') >= 0 ? input.split('.').pop() : input;
        if (input === '') return;
        values[outName] = [];
        items.forEach(function (it) {
          var v = read(dot, it.json, input);
          if (!o.keepMissing) {
            if (Array.isArray(v)) v = v.filter(function (x) { return x !== null; });
            else if (v === null || v === undefined) return;
          }
          if (Array.isArray(v) && o.mergeLists) values[outName].push.apply(values[outName], v);
          else values[outName].push(v === undefined ? null : v);
        });
      });
      Object.keys(values).forEach(function (k) { if (dot) set(json, k, values[k]); else json[k] = values[k]; });
      return [{ json: json, pairedItem: items.map(function (_, i) { return { item: i }; }) }];
    }
    var destination = p.destinationFieldName === undefined ? 'data' : p.destinationFieldName;
    var exclude = fields(p.fieldsToExclude), include = fields(p.fieldsToInclude);
    var paired = [], rows = [];
    items.forEach(function (it, i) {
      if (!exclude.length && !include.length) { rows.push(it.json); paired.push({ item: i }); return; }
      var row = {};
      Object.keys(it.json).forEach(function (k) {
        if (exclude.length && exclude.indexOf(k) >= 0) return;
        if (include.length && include.indexOf(k) < 0) return;
        row[k] = it.json[k];
      });
      if (Object.keys(row).length === 0) return;
      rows.push(row);
      paired.push({ item: i });
    });
    var out = {};
    out[destination] = rows;
    return [{ json: out, pairedItem: paired }];
  };

  var SUMMARY_PREFIX = { append: 'appended_', average: 'average_', concatenate: 'concatenated_', count: 'count_', countUnique: 'unique_count_', max: 'max_', min: 'min_', sum: 'sum_' };
  function empty(v) { return v === undefined || v === null || v === ''; }
  function summarizeOne(rows, a, getValue) {
    var field = a.field, kind = a.aggregation || 'count', data = rows.slice();
    if (kind === 'average' || kind === 'sum') data = data.filter(function (r) { return typeof getValue(r, field) === 'number'; });
    var vals = data.map(function (r) { return getValue(r, field); });
    switch (kind) {
      case 'append': return (a.includeEmpty ? vals : vals.filter(function (v) { return !empty(v); }));
      case 'concatenate': {
        var sep = a.separateBy === 'other' ? a.customSeparator : a.separateBy;
        return (a.includeEmpty ? vals : vals.filter(function (v) { return !empty(v); }))
          .map(function (v) { return typeof v === 'object' ? JSON.stringify(v) : v === undefined ? 'undefined' : v; })
          .join(sep === undefined ? ',' : sep);
      }
      case 'average': return vals.reduce(function (s, v) { return s + v; }, 0) / vals.length;
      case 'sum': return vals.reduce(function (s, v) { return s + v; }, 0);
      case 'min':
      case 'max': {
        var best;
        vals.forEach(function (v) {
          if (empty(v)) return;
          if (best === undefined || (kind === 'min' ? v < best : v > best)) best = v;
        });
        return best === undefined ? null : best;
      }
      case 'countUnique': {
        var seen = [];
        vals.forEach(function (v) { if ((a.includeEmpty || !empty(v)) && seen.indexOf(v) < 0) seen.push(v); });
        return seen.length;
      }
      default: return a.includeEmpty ? vals.length : vals.filter(function (v) { return !empty(v); }).length;
    }
  }
  function cleanKeys(obj) {
    [/[\]\["]/g, /[ .]/g].forEach(function (re, n) {
      Object.keys(obj).forEach(function (k) {
        if (!k.match(re)) return;
        var nk = k.replace(re, n === 0 ? '' : '_');
        obj[nk] = obj[k];
        delete obj[k];
      });
    });
  }
  function summarizeGroup(rows, aggs, single, getValue) {
    var res = {};
    aggs.forEach(function (a) { res[(SUMMARY_PREFIX[a.aggregation] || 'count_') + a.field] = summarizeOne(rows, a, getValue); });
    cleanKeys(res);
    if (!single) res.pairedItems = rows.map(function (r) { return r._itemIndex; });
    return res;
  }
  function splitData(keys, rows, aggs, o, getValue) {
    if (!keys.length) return summarizeGroup(rows, aggs, o.outputFormat === 'singleItem', getValue);
    var groups = {};
    rows.forEach(function (r) {
      var k = getValue(r, keys[0]);
      if (typeof k === 'object') k = JSON.stringify(k);
      if (o.skipEmptySplitFields && typeof k !== 'number' && !k) return;
      (groups[k] = groups[k] || []).push(r);
    });
    var out = {};
    Object.keys(groups).forEach(function (k) { out[k] = splitData(keys.slice(1), groups[k], aggs, o, getValue); });
    return out;
  }
  function cleanName(f) { return f.replace(/[\]\["]/g, '').replace(/[ .]/g, '_'); }
  function toRows(result, keys, previous) {
    var name = cleanName(keys[0]), rows = [];
    Object.keys(result).forEach(function (k) {
      var base = Object.assign({}, previous);
      base[name] = k;
      if (keys.length === 1) rows.push(Object.assign(base, result[k]));
      else rows.push.apply(rows, toRows(result[k], keys.slice(1), base));
    });
    return rows;
  }
  ops.summarize = function (items, p) {
    var o = p.options || {};
    var rows = items.map(function (it, i) { return Object.assign({}, it.json, { _itemIndex: i }); });
    var keys = fields(p.fieldsToSplitBy);
    var aggs = ((p.fieldsToSummarize && p.fieldsToSummarize.values) || []).map(function (a) { return Object.assign({ aggregation: 'count', field: '' }, a); });
    if (!aggs.filter(function (a) { return a.field !== ''; }).length)
      fail("You need to add at least one aggregation to 'Fields to Summarize' with non empty 'Field'");
    var getValue = o.disableDotNotation ? function (r, f) { return r[f]; } : get;
    var result = splitData(keys, rows, aggs, o, getValue);
    if (p.typeVersion <= 1 && !o.continueIfFieldNotFound) {
      aggs.forEach(function (a) {
        if (a.field !== '' && !rows.some(function (r) { return getValue(r, a.field) !== undefined; }))
          fail("The field '" + a.field + "' does not exist in any items");
      });
    }
    if (o.outputFormat === 'singleItem') return [{ json: result, pairedItem: rows.map(function (_, i) { return { item: i }; }) }];
    var list = keys.length ? toRows(result, keys, {}) : [result];
    return list.map(function (r) {
      var paired = (r.pairedItems || []).map(function (i) { return { item: i }; });
      var json = Object.assign({}, r);
      delete json.pairedItems;
      return { json: json, pairedItem: paired };
    });
  };

  ops.sort = function (items, p) {
    var out = items.slice();
    var type = p.type || 'simple';
    if (type === 'random') {
      for (var i = out.length - 1; i > 0; i--) {
        var j = Math.floor(Math.random() * (i + 1));
        var t = out[i]; out[i] = out[j]; out[j] = t;
      }
      return out;
    }
    if (type === 'code') return out.sort(__sortCode);
    var o = p.options || {};
    var dot = !o.disableDotNotation;
    var list = (p.sortFieldsUi && p.sortFieldsUi.sortField) || [];
    list.forEach(function (f) {
      var found = items.some(function (it) { return dot ? get(it.json, f.fieldName) !== undefined : hasOwn.call(it.json, f.fieldName); });
      if (!found) fail("Couldn't find the field '" + f.fieldName + "' in the input data");
    });
    var lower = function (v) { return typeof v === 'string' ? v.toLowerCase() : v; };
    return out.sort(function (a, b) {
      for (var k = 0; k < list.length; k++) {
        var dir = list[k].order === 'descending' ? -1 : 1;
        var x = lower(read(dot, a.json, list[k].fieldName)), y = lower(read(dot, b.json, list[k].fieldName));
        if (!deepEqual(x, y)) return lt(x, y) ? -dir : dir;
      }
      return 0;
    });
  };

  ops.limit = function (items, p) {
    var max = p.maxItems === undefined ? 1 : Number(p.maxItems);
    if (max > items.length) return items;
    return p.keep === 'lastItems' ? items.slice(items.length - max) : items.slice(0, max);
  };

  ops.removeDuplicates = function (items, p) {
    if (items.length === 0) return items;
    var o = p.options || {};
    var dot = !o.disableDotNotation;
    var keysOf = function (json) { return dot ? Object.keys(flattenKeys(json, [], {})) : Object.keys(json); };
    var keys = keysOf(items[0].json);
    items.forEach(function (it) { keysOf(it.json).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
    var compare = p.compare || 'allFields';
    if (compare === 'allFieldsExcept') {
      var exclude = fields(p.fieldsToExclude);
      if (!exclude.length) fail('No fields specified. Please add a field to exclude from comparison');
      if (dot) keys = keysOf(items[0].json);
      keys = keys.filter(function (k) { return exclude.indexOf(k) < 0; });
    } else if (compare === 'selectedFields') {
      keys = fields(p.fieldsToCompare);
      if (!keys.length) fail('No fields specified. Please add a field to compare on');
    }
    var sorted = items.map(function (it, i) { return { json: it.json, index: i }; });
    sorted.sort(function (a, b) {
      for (var k = 0; k < keys.length; k++) {
        var x = read(dot, a.json, keys[k]), y = read(dot, b.json, keys[k]);
        if (!deepEqual(x, y)) return lt(x, y) ? -1 : 1;
      }
      return 0;
    });
    keys.forEach(function (key) {
      var type;
      sorted.forEach(function (it, i) {
        if (key === '') fail('Name of field to compare is blank');
        var v = read(dot, it.json, key);
        if (v === null && p.typeVersion > 1) return;
        if (v === undefined) fail("'" + key + "' field is missing from some input items");
        if (type !== undefined && type !== typeof v) fail("'" + key + "' isn't always the same type");
        type = typeof v;
      });
    });
    var removed = {};
    var kept = sorted[0];
    for (var i = 1; i < sorted.length; i++) {
      var same = keys.every(function (k) { return deepEqual(read(dot, sorted[i].json, k), read(dot, kept.json, k)); });
      if (same) removed[sorted[i].index] = true;
      else kept = sorted[i];
    }
    var out = items.filter(function (_, i) { return !removed[i]; });
    if (o.removeOtherFields) {
      out = out.map(function (it, i) {
        var json = {};
        keys.forEach(function (k) { var v = get(it.json, k); if (v !== undefined) set(json, k, v); });
        return { json: json, pairedItem: { item: i } };
      });
    }
    return out;
  };

  ops.renameKeys = function (items, p) {
    var list = (p.keys && p.keys.key) || [];
    return items.map(function (it, i) {
      var out = { json: copy(it.json), pairedItem: { item: i } };
      if (it.binary !== undefined) out.binary = it.binary;
      list.forEach(function (k) {
        if (!k.currentKey || !k.newKey || k.currentKey === k.newKey) return;
        var v = get(it.json, k.currentKey);
        if (v === undefined) return;
        set(out.json, k.newKey, v);
        unset(out.json, k.currentKey);
      });
      return out;
    });
  };

  // ----- Merge (v1–v3): its inputs are item lists; see services/extflow/nodes/merge.ts -----
  function isEmptyValue(v) { return v === undefined || v === null || v === ''; }
  /** lodash-style deep merge of src into target (arrays merged by index); overrideEmpty keeps a target value over an empty one. */
  function deepMergeInto(target, src, overrideEmpty, depth) {
    if (depth > 100) fail('Merge: the items are nested too deeply');
    Object.keys(src).forEach(function (k) {
      if (unsafe(k)) return;
      var sv = src[k], tv = target[k];
      if (overrideEmpty && isEmptyValue(sv) && tv !== undefined) return;
      if (sv !== null && typeof sv === 'object') {
        var base = tv !== null && typeof tv === 'object' && Array.isArray(tv) === Array.isArray(sv) ? (Array.isArray(tv) ? tv.slice() : Object.assign({}, tv)) : Array.isArray(sv) ? [] : {};
        target[k] = deepMergeInto(base, sv, overrideEmpty, depth + 1);
      } else if (sv !== undefined || !hasOwn.call(target, k)) target[k] = sv;
    });
    return target;
  }
  function shallowMergeInto(target, src, overrideEmpty) {
    Object.keys(src).forEach(function (k) {
      if (unsafe(k)) return;
      if (overrideEmpty && isEmptyValue(src[k]) && target[k] !== undefined) return;
      target[k] = src[k];
    });
    return target;
  }
  /** Merges JSON objects left to right (later ones win) by the clash options' merge mode. */
  function mergeJson(clash, list) {
    var out = {};
    list.forEach(function (o) {
      if (!isObj(o)) return;
      if (clash.mergeMode === 'shallowMerge') shallowMergeInto(out, o, !!clash.overrideEmpty);
      else deepMergeInto(out, o, !!clash.overrideEmpty, 0);
    });
    return out;
  }
  function mergeBinary(list) {
    var out = {};
    list.forEach(function (b) { if (isObj(b)) Object.assign(out, b); });
    return out;
  }
  function pairsOf(list) {
    var out = [];
    list.forEach(function (it) {
      if (!it || it.pairedItem === undefined) return;
      if (Array.isArray(it.pairedItem)) out.push.apply(out, it.pairedItem);
      else out.push(it.pairedItem);
    });
    return out;
  }
  function combined(entries, clash) {
    var it = { json: mergeJson(clash, entries.map(function (e) { return e ? e.json : {}; })), pairedItem: pairsOf(entries) };
    var bin = mergeBinary(entries.map(function (e) { return e && e.binary; }));
    if (Object.keys(bin).length) it.binary = bin;
    return it;
  }
  function suffixed(list, suffix) {
    return list.map(function (it) {
      var json = {};
      Object.keys(it.json).forEach(function (k) { json[k + '_' + suffix] = it.json[k]; });
      return Object.assign({}, it, { json: json });
    });
  }
  function sameValue(fuzzy) {
    return function (a, b) {
      if (deepEqual(a, b)) return true;
      if (!fuzzy) return false;
      var prim = function (v) { return v !== null && v !== undefined && typeof v !== 'object'; };
      if (prim(a) && prim(b)) return String(a) === String(b);
      return isEmptyValue(a) && isEmptyValue(b);
    };
  }
  /** The cross join's bound: more output items than this fail the node instead of exhausting the sandbox. */
  var MAX_MERGE_ITEMS = 100000;
  function bounded(count) {
    if (count > MAX_MERGE_ITEMS)
      fail('Merge would output ' + count + ' items, more than the ' + MAX_MERGE_ITEMS + ' a merge may output here; filter the inputs first');
  }
  function findMatches(in1, in2, pairs, o, joinMode, outputDataFrom) {
    var same = sameValue(!!o.fuzzyCompare), dot = !o.disableDotNotation, all = (o.multipleMatches || 'all') === 'all';
    var r = { matched: [], matched2: [], unmatched1: [], unmatched2: [] }, used = {}, produced = 0;
    in1.forEach(function (e1) {
      var lookup = pairs.map(function (pr) { return { field: pr.field2, value: read(dot, e1.json, pr.field1) }; });
      if (lookup.some(function (l) { return l.value === undefined; })) { r.unmatched1.push(e1); return; }
      var found = [];
      for (var j = 0; j < in2.length; j++) {
        var e2 = in2[j];
        if (lookup.every(function (l) { return same(l.value, read(dot, e2.json, l.field)); })) {
          found.push(j);
          if (!all) break;
        }
      }
      found.forEach(function (j) { used[j] = true; });
      if (!found.length) { r.unmatched1.push(e1); return; }
      produced += found.length;
      bounded(produced);
      if (outputDataFrom === 'both' || joinMode === 'enrichInput1' || joinMode === 'enrichInput2')
        found.forEach(function (j) { r.matched.push({ entry: e1, matches: [in2[j]] }); });
      else r.matched.push({ entry: e1, matches: found.map(function (j) { return in2[j]; }) });
    });
    in2.forEach(function (e, j) { (used[j] ? r.matched2 : r.unmatched2).push(e); });
    return r;
  }
  function mergeMatched(matched, clash, joinMode) {
    var resolve = clash.resolveClash;
    if (resolve === undefined) resolve = joinMode === 'enrichInput2' ? 'preferInput1' : 'preferInput2';
    return matched.map(function (m) {
      if (resolve === 'addSuffix') return combined(suffixed([m.entry], '1').concat(suffixed(m.matches, '2')), clash);
      if (resolve === 'preferInput1') return combined(m.matches.concat([m.entry]), clash);
      return combined([m.entry].concat(m.matches), clash);
    });
  }
  function combineByFields(lists, p) {
    var in1 = lists[0] || [], in2 = lists[1] || [], o = p.options || {}, clash = p.clash || {};
    var joinMode = p.joinMode || 'keepMatches', from = p.outputDataFrom || 'both';
    var pairs = p.fields || [];
    if (pairs.length === 1 && pairs[0].field1 === '' && pairs[0].field2 === '')
      fail('You need to define at least one pair of fields in "Fields to Match" to match on');
    pairs.forEach(function (pr, i) {
      if (pr.field1 === '' || pr.field2 === '') fail('You need to define both fields in "Fields to Match" for pair ' + (i + 1));
    });
    if (p.typeVersion < 2.1) {
      var dot = !o.disableDotNotation;
      [[in1, 'field1', 'Input 1'], [in2, 'field2', 'Input 2']].forEach(function (c) {
        pairs.forEach(function (pr) {
          if (!c[0].some(function (it) { return read(dot, it.json, pr[c[1]]) !== undefined; }))
            fail("Field '" + pr[c[1]] + "' is not present in any of items in '" + c[2] + "'");
        });
      });
    }
    if (in1.length === 0 || in2.length === 0) {
      if (joinMode === 'keepNonMatches' && ((!in1.length && from === 'input1') || (!in2.length && from === 'input2'))) return [];
      if (joinMode === 'keepMatches' || (joinMode === 'enrichInput1' && !in1.length) || (joinMode === 'enrichInput2' && !in2.length)) return [];
      return in1.concat(in2);
    }
    if (!pairs.length) return joinMode === 'keepMatches' || joinMode === 'keepEverything' || joinMode === 'enrichInput2' ? [] : in1;
    var m = findMatches(in1, in2, pairs, o, joinMode, from);
    if (joinMode === 'keepMatches' || joinMode === 'keepEverything') {
      var out = from === 'input1' ? m.matched.map(function (x) { return x.entry; }) : from === 'input2' ? m.matched2 : mergeMatched(m.matched, clash);
      if (joinMode === 'keepEverything') {
        var u1 = m.unmatched1, u2 = m.unmatched2;
        if (clash.resolveClash === 'addSuffix') { u1 = suffixed(u1, '1'); u2 = suffixed(u2, '2'); }
        out = out.concat(u1, u2);
      }
      return out;
    }
    if (joinMode === 'keepNonMatches') {
      if (from === 'input1') return m.unmatched1;
      if (from === 'input2') return m.unmatched2;
      var tag = function (list, source) { return list.map(function (it) { return Object.assign({}, it, { json: Object.assign({}, it.json, { _source: source }) }); }); };
      return tag(m.unmatched1, 'input1').concat(tag(m.unmatched2, 'input2'));
    }
    var merged = mergeMatched(m.matched, clash, joinMode);
    var rest = joinMode === 'enrichInput1' ? m.unmatched1 : m.unmatched2;
    if (clash.resolveClash === 'addSuffix') rest = suffixed(rest, joinMode === 'enrichInput1' ? '1' : '2');
    return merged.concat(rest);
  }
  function combineByPosition(lists, p) {
    var clash = p.clash || {}, resolve = clash.resolveClash || '';
    var preferred = resolve.indexOf('preferInput') === 0 ? Number(resolve.slice('preferInput'.length)) - 1 : lists.length - 1;
    var data = lists.map(function (l, i) { return resolve === 'addSuffix' ? suffixed(l, String(i + 1)) : l; });
    var pref = data[preferred] || [];
    var lengths = data.map(function (l) { return l.length; }).concat([pref.length]);
    var n = p.includeUnpaired ? Math.max.apply(null, lengths) : Math.min.apply(null, lengths);
    var out = [];
    for (var i = 0; i < n; i++) out.push(combined(data.map(function (l) { return l[i]; }).concat([pref[i]]), clash));
    return out;
  }
  function combineAll(lists, p) {
    var clash = p.clash || {}, a = lists[0] || [], b = lists[1] || [];
    if (clash.resolveClash === 'preferInput1') { var t = a; a = b; b = t; }
    if (clash.resolveClash === 'addSuffix') { a = suffixed(a, '1'); b = suffixed(b, '2'); }
    bounded(a.length * b.length);
    var out = [];
    a.forEach(function (x) { b.forEach(function (y) { out.push(combined([x, y], clash)); }); });
    return out;
  }
  /** Merge v1's modes that v2 renamed or dropped. */
  function keyString(v) { return v === undefined || v === null ? undefined : typeof v === 'object' ? JSON.stringify(v) : String(v); }
  function legacy(lists, p) {
    var a = lists[0] || [], b = lists[1] || [];
    var k1 = p.propertyName1, k2 = p.propertyName2;
    var keysOf = function () {
      var set = {};
      b.forEach(function (it) { var k = keyString(get(it.json, k2)); if (k !== undefined) set[k] = true; });
      return set;
    };
    switch (p.mode) {
      case 'keepKeyMatches':
      case 'removeKeyMatches': {
        var keys = keysOf(), keep = p.mode === 'keepKeyMatches';
        return a.filter(function (it) { var k = keyString(get(it.json, k1)); return (k !== undefined && keys[k] === true) === keep; });
      }
      case 'mergeByKey': {
        var byKey = {};
        b.forEach(function (it) { var k = keyString(get(it.json, k2)); if (k !== undefined && !byKey[k]) byKey[k] = it; });
        var out = [];
        a.forEach(function (it) {
          var match = byKey[keyString(get(it.json, k1))];
          if (!match) { if (p.join !== 'inner') out.push(it); return; }
          var json = copy(it.json);
          Object.keys(match.json).forEach(function (key) {
            if (unsafe(key)) return;
            var cur = json[key];
            if (p.overwrite === 'undefined' ? cur === undefined : p.overwrite === 'blank' ? !isEmptyValue(cur) : false) return;
            json[key] = match.json[key];
          });
          out.push({ json: json, pairedItem: pairsOf([it, match]) });
        });
        return out;
      }
      case 'mergeByIndex': {
        var join = p.join || 'left';
        var n = join === 'inner' ? Math.min(a.length, b.length) : join === 'outer' ? Math.max(a.length, b.length) : a.length;
        var res = [];
        for (var i = 0; i < n; i++) {
          if (i >= a.length) { res.push(b[i]); continue; }
          if (i >= b.length) { res.push(a[i]); continue; }
          res.push({ json: Object.assign({}, a[i].json, b[i].json), pairedItem: pairsOf([a[i], b[i]]) });
        }
        return res;
      }
      case 'multiplex':
        return combineAll(lists, { clash: { mergeMode: 'shallowMerge' } });
      case 'passThrough':
        return p.output === 'input2' ? b : a;
      case 'wait':
        return [{ json: {}, pairedItem: pairsOf(a.concat(b)) }];
      default:
        fail('Merge mode "' + p.mode + '" is not known');
    }
  }
  ops.merge = function (lists, p) {
    switch (p.mode) {
      case 'append': {
        var total = 0;
        lists.forEach(function (l) { total += l.length; });
        bounded(total);
        return [].concat.apply([], lists);
      }
      case 'combineByFields': return combineByFields(lists, p);
      case 'combineByPosition': return combineByPosition(lists, p);
      case 'combineAll': return combineAll(lists, p);
      case 'chooseBranch': {
        if (p.output === 'empty') return [{ json: {}, pairedItem: pairsOf([].concat.apply([], lists)) }];
        var n = Number(p.useDataOfInput || 1);
        if (n > lists.length) fail('Input ' + n + " doesn't exist");
        return lists[n - 1] || [];
      }
      default: return legacy(lists, p);
    }
  };

  function messageOf(err) { return err && err.message ? err.message : String(err); }
  /**
   * Rethrows a failure unless the node continues on its regular output. For the error output the
   * message is marked, so the node after the failure can give the tool's error item the message
   * alone, without what the sandbox adds around it (itemWiring.ts, errorItemNode).
   */
  function failed(err, settings) {
    if (settings.onError === 'continueRegularOutput') return;
    if (settings.onError === 'continueErrorOutput') throw new Error(ERROR_START + messageOf(err) + ERROR_END);
    throw err;
  }

  function prepare(input, settings) {
    var items = toItems(input);
    return settings.executeOnce ? items.slice(0, 1) : items;
  }
  function recover(err, settings, items) {
    failed(err, settings);
    return pair([{ json: { error: messageOf(err) } }], items.length);
  }
  function finish(out, settings, items) {
    if (out.length > 0 || !settings.alwaysOutputData) return out;
    return [{ json: {}, pairedItem: items.map(function (_, i) { return { item: i, input: 0 }; }) }];
  }

  /**
   * Runs one item node: its input as items, the node's settings around it. onError
   * "continueRegularOutput" answers a failure with the tool's error item; other failures throw.
   */
  function run(op, params, input, settings) {
    var items = prepare(input, settings), out;
    try { out = pair(ops[op](items, params), items.length); } catch (err) { out = recover(err, settings, items); }
    return finish(out, settings, items);
  }

  /**
   * Runs an item node of several inputs (Merge): inputs holds each input's value (absent when
   * that input did not run); items of input k > 0 are paired as { item, input: k }.
   */
  function runInputs(op, params, inputs, settings) {
    var lists = inputs.map(function (v, k) {
      var list = toItems(v).map(function (it) { if (k > 0) it.pairedItem = { item: it.pairedItem.item, input: k }; return it; });
      return settings.executeOnce ? list.slice(0, 1) : list;
    });
    var all = [].concat.apply([], lists), out;
    try { out = ops[op](lists, params); } catch (err) { out = recover(err, settings, all); }
    return finish(out, settings, all);
  }

  /** Runs a Code / Function node's (async) body over the items, with the same settings as run(). */
  async function runCode(input, settings, body) {
    var items = prepare(input, settings), out;
    try { out = await body(items, settings.onError === 'continueRegularOutput'); } catch (err) { out = recover(err, settings, items); }
    return finish(out, settings, items);
  }

  return { run: run, runInputs: runInputs, runCode: runCode, toItems: toItems, normalize: normalize, pair: pair, ops: ops, get: get, isItem: isItem };
})();
`;

/** The settings of an exported node that change how its items flow. */
export interface ItemSettings {
  executeOnce?: boolean;
  alwaysOutputData?: boolean;
  onError?: 'continueRegularOutput' | 'continueErrorOutput' | 'stopWorkflow';
}

/** A code node's source running item operation `op` with `params` (JSON) over its input. */
export function itemNodeSource(op: string, params: Record<string, unknown>, settings: ItemSettings, extra = ''): string {
  return `${ITEM_RUNTIME}\n${extra}return __items.run(${JSON.stringify(op)}, ${JSON.stringify(params)}, input, ${JSON.stringify(settings)});`;
}
