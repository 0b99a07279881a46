/**
 * The external tool's expression runtime, as guest JavaScript for the code sandbox
 * (services/kernel/sandbox: QuickJS, no Intl, no timers, no I/O). A converted node whose
 * expressions have no exact JSONata translation gets one code step that runs this prelude and
 * then every such expression of the node (services/extflow/jsExpressions.ts).
 *
 * What it gives the expressions, over our one-value-per-connection data (one item):
 * `$json`, `$binary` (always empty: runs here carry no binary data), `$input` (item, all(),
 * first(), last(), params), `$('Node')` (item, first(), last(), all(), itemMatching(),
 * isExecuted), `$node["Node"].json`, `$items()`, `$prevNode`, `$runIndex` and `$itemIndex`
 * (0), `$workflow` (the export's id and name), `$now` / `$today` and `DateTime` / `Duration`
 * (a Luxon subset: UTC and fixed offsets only, since the sandbox has no time-zone data),
 * `$jmespath` (paths, indexes, `[*]` projections and `[]` flattening), `$if`, `$ifEmpty`, and
 * the data-transformation methods on strings, numbers, arrays, objects and dates.
 * `$env` fails the evaluation with a message saying environment access is refused; `$vars`,
 * `$execution` and `$secrets` fail saying they have no equivalent here.
 *
 * Caveats: the transformation methods are installed on the built-in prototypes (not
 * enumerable), where the external tool rewrites calls; an object's own field of the same name
 * (`isEmpty`) therefore wins here. Luxon's full formatting, locales and named zones are absent.
 * The source is plain ES2019 text kept free of backticks.
 */
export const JS_RUNTIME = String.raw`
const __rt = (function () {
  'use strict';
  var def = function (proto, name, fn) {
    Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
  };
  var fail = function (message) { throw new Error(message); };
  var isObj = function (v) { return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof DT); };
  var pad = function (n, w) { var s = String(Math.abs(Math.trunc(n))); while (s.length < (w || 2)) s = '0' + s; return (n < 0 ? '-' : '') + s; };

  // ----- Duration (a Luxon subset) -----------------------------------------------------------
  var UNITS = ['years', 'quarters', 'months', 'weeks', 'days', 'hours', 'minutes', 'seconds', 'milliseconds'];
  var MS = { weeks: 604800000, days: 86400000, hours: 3600000, minutes: 60000, seconds: 1000, milliseconds: 1 };
  var unitName = function (u) {
    var s = String(u).toLowerCase();
    if (s.slice(-1) !== 's') s += 's';
    if (UNITS.indexOf(s) < 0) fail('Invalid unit ' + u);
    return s;
  };
  function Duration(values) { this.values = values; }
  Duration.fromObject = function (o) {
    var v = {};
    for (var k in o) v[unitName(k)] = Number(o[k]);
    return new Duration(v);
  };
  Duration.fromMillis = function (ms) { return new Duration({ milliseconds: ms }); };
  Duration.prototype.toMillis = function () {
    var t = 0;
    for (var k in this.values) {
      if (k === 'years') t += this.values[k] * 365 * 86400000;
      else if (k === 'quarters') t += this.values[k] * 91 * 86400000;
      else if (k === 'months') t += this.values[k] * 30 * 86400000;
      else t += this.values[k] * MS[k];
    }
    return t;
  };
  Duration.prototype.as = function (unit) {
    var u = unitName(unit);
    if (this.values[u] !== undefined && Object.keys(this.values).length === 1) return this.values[u];
    var ms = this.toMillis();
    if (u === 'years') return ms / (365 * 86400000);
    if (u === 'months') return ms / (30 * 86400000);
    if (u === 'quarters') return ms / (91 * 86400000);
    return ms / MS[u];
  };
  Duration.prototype.toObject = function () { var o = {}; for (var k in this.values) o[k] = this.values[k]; return o; };
  Duration.prototype.valueOf = Duration.prototype.toMillis;
  Duration.prototype.toJSON = function () { return this.toISO(); };
  Duration.prototype.toISO = function () { return 'PT' + this.toMillis() / 1000 + 'S'; };
  UNITS.forEach(function (u) {
    Object.defineProperty(Duration.prototype, u, { get: function () { return this.values[u] || 0; } });
  });

  // ----- DateTime (a Luxon subset: UTC or a fixed offset) ------------------------------------
  var MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
  var DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
  function DT(ms, offset) {
    this.ts = ms;
    this.offset = offset || 0; // minutes east of UTC
    this.isValid = isFinite(ms);
    var d = new Date(ms + this.offset * 60000);
    this.c = this.isValid
      ? { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), millisecond: d.getUTCMilliseconds(), weekday: ((d.getUTCDay() + 6) % 7) + 1 }
      : {};
  }
  var fromParts = function (c, offset) {
    var ms = Date.UTC(c.year, (c.month || 1) - 1, c.day === undefined ? 1 : c.day, c.hour || 0, c.minute || 0, c.second || 0, c.millisecond || 0);
    return new DT(ms - (offset || 0) * 60000, offset);
  };
  var invalid = function () { return new DT(NaN, 0); };
  var zoneOffset = function (zone) {
    if (zone === undefined || zone === null) return 0;
    if (typeof zone === 'number') return zone;
    var z = String(zone);
    if (/^(utc|gmt|z|system|local|default)$/i.test(z)) return 0;
    var m = /^(?:utc|gmt)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(z);
    if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] || 0));
    fail('Time zone "' + z + '" is not available here: expressions run in UTC or a fixed offset such as "+02:00"');
  };
  DT.now = function () { return new DT(Date.now(), 0); };
  DT.local = function (y, mo, d, h, mi, s, ms) {
    if (y === undefined) return DT.now();
    return fromParts({ year: y, month: mo, day: d, hour: h, minute: mi, second: s, millisecond: ms }, 0);
  };
  DT.utc = DT.local;
  DT.fromMillis = function (ms, o) { return new DT(Number(ms), zoneOffset(o && o.zone)); };
  DT.fromSeconds = function (s, o) { return new DT(Number(s) * 1000, zoneOffset(o && o.zone)); };
  DT.fromJSDate = function (d, o) { return new DT(d.getTime(), zoneOffset(o && o.zone)); };
  DT.fromObject = function (c, o) { return fromParts(c, zoneOffset(o && o.zone)); };
  DT.fromISO = function (s, o) {
    var m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i.exec(String(s).trim());
    if (!m) return invalid();
    var off = m[8] ? (/^z$/i.test(m[8]) ? 0 : zoneOffset(m[8])) : zoneOffset(o && o.zone);
    var dt = fromParts({ year: +m[1], month: m[2] ? +m[2] : 1, day: m[3] ? +m[3] : 1, hour: m[4] ? +m[4] : 0, minute: m[5] ? +m[5] : 0, second: m[6] ? +m[6] : 0, millisecond: m[7] ? Math.round(Number('0.' + m[7]) * 1000) : 0 }, off);
    return dt;
  };
  DT.fromSQL = function (s, o) { return DT.fromISO(String(s).replace(' ', 'T'), o); };
  DT.fromHTTP = function (s) { var t = Date.parse(s); return new DT(t, 0); };
  DT.fromRFC2822 = DT.fromHTTP;
  DT.isDateTime = function (v) { return v instanceof DT; };
  DT.fromFormat = function (s, f) {
    // The common numeric formats; anything else is refused rather than guessed.
    var tokens = [];
    var re = String(f).replace(/[.*+?^$(){}|[\]\\]/g, '\\$&').replace(/yyyy|MM|M|dd|d|HH|H|mm|ss|SSS/g, function (t) {
      tokens.push(t);
      return t === 'yyyy' ? '(\\d{4})' : t === 'SSS' ? '(\\d{3})' : t.length === 2 ? '(\\d{2})' : '(\\d{1,2})';
    });
    var m = new RegExp('^' + re + '$').exec(String(s));
    if (!m) return invalid();
    var c = { year: 1970, month: 1, day: 1 };
    var names = { yyyy: 'year', MM: 'month', M: 'month', dd: 'day', d: 'day', HH: 'hour', H: 'hour', mm: 'minute', ss: 'second', SSS: 'millisecond' };
    tokens.forEach(function (t, i) { c[names[t]] = Number(m[i + 1]); });
    return fromParts(c, 0);
  };
  ['year', 'month', 'day', 'hour', 'minute', 'second', 'millisecond', 'weekday'].forEach(function (k) {
    Object.defineProperty(DT.prototype, k, { get: function () { return this.c[k]; } });
  });
  Object.defineProperty(DT.prototype, 'quarter', { get: function () { return Math.ceil(this.c.month / 3); } });
  Object.defineProperty(DT.prototype, 'zoneName', { get: function () { return this.offset === 0 ? 'UTC' : 'UTC' + offsetText(this.offset, true); } });
  Object.defineProperty(DT.prototype, 'monthLong', { get: function () { return MONTHS[this.c.month - 1]; } });
  Object.defineProperty(DT.prototype, 'monthShort', { get: function () { return MONTHS[this.c.month - 1].slice(0, 3); } });
  Object.defineProperty(DT.prototype, 'weekdayLong', { get: function () { return DAYS[this.c.weekday - 1]; } });
  Object.defineProperty(DT.prototype, 'weekdayShort', { get: function () { return DAYS[this.c.weekday - 1].slice(0, 3); } });
  Object.defineProperty(DT.prototype, 'daysInMonth', { get: function () { return new Date(Date.UTC(this.c.year, this.c.month, 0)).getUTCDate(); } });
  Object.defineProperty(DT.prototype, 'ordinal', { get: function () { return Math.round((Date.UTC(this.c.year, this.c.month - 1, this.c.day) - Date.UTC(this.c.year, 0, 1)) / 86400000) + 1; } });
  var offsetText = function (off, colon) { return (off < 0 ? '-' : '+') + pad(Math.floor(Math.abs(off) / 60)) + (colon ? ':' : '') + pad(Math.abs(off) % 60); };
  DT.prototype.toISO = function (o) {
    if (!this.isValid) return null;
    var c = this.c;
    var date = pad(c.year, 4) + '-' + pad(c.month) + '-' + pad(c.day);
    var time = pad(c.hour) + ':' + pad(c.minute) + ':' + pad(c.second) + (o && o.suppressMilliseconds && c.millisecond === 0 ? '' : '.' + pad(c.millisecond, 3));
    return date + 'T' + time + (o && o.includeOffset === false ? '' : this.offset === 0 ? 'Z' : offsetText(this.offset, true));
  };
  DT.prototype.toISODate = function () { return this.isValid ? this.toISO().slice(0, 10) : null; };
  DT.prototype.toISOTime = function () { return this.isValid ? this.toISO().slice(11) : null; };
  DT.prototype.toSQLDate = DT.prototype.toISODate;
  DT.prototype.toSQL = function () { return this.isValid ? this.toISODate() + ' ' + this.toISO({ includeOffset: false }).slice(11) : null; };
  DT.prototype.toString = function () { return this.isValid ? this.toISO() : 'Invalid DateTime'; };
  DT.prototype.toJSON = function () { return this.toISO(); };
  DT.prototype.toMillis = function () { return this.ts; };
  DT.prototype.valueOf = DT.prototype.toMillis;
  DT.prototype.toSeconds = function () { return this.ts / 1000; };
  DT.prototype.toUnixInteger = function () { return Math.floor(this.ts / 1000); };
  DT.prototype.toJSDate = function () { return new Date(this.ts); };
  DT.prototype.toUTC = function () { return new DT(this.ts, 0); };
  DT.prototype.toLocal = DT.prototype.toUTC;
  DT.prototype.setZone = function (zone) { return new DT(this.ts, zoneOffset(zone)); };
  DT.prototype.toObject = function () { var o = {}; for (var k in this.c) if (k !== 'weekday') o[k] = this.c[k]; return o; };
  DT.prototype.toFormat = function (fmt) {
    if (!this.isValid) return 'Invalid DateTime';
    var c = this.c;
    var self = this;
    var h12 = c.hour % 12 === 0 ? 12 : c.hour % 12;
    var map = {
      yyyy: pad(c.year, 4), yy: pad(c.year % 100), y: String(c.year),
      MMMM: MONTHS[c.month - 1], MMM: MONTHS[c.month - 1].slice(0, 3), MM: pad(c.month), M: String(c.month),
      LLLL: MONTHS[c.month - 1], LLL: MONTHS[c.month - 1].slice(0, 3), LL: pad(c.month), L: String(c.month),
      dd: pad(c.day), d: String(c.day),
      EEEE: DAYS[c.weekday - 1], EEE: DAYS[c.weekday - 1].slice(0, 3), E: String(c.weekday),
      cccc: DAYS[c.weekday - 1], ccc: DAYS[c.weekday - 1].slice(0, 3), c: String(c.weekday),
      HH: pad(c.hour), H: String(c.hour), hh: pad(h12), h: String(h12),
      mm: pad(c.minute), m: String(c.minute), ss: pad(c.second), s: String(c.second),
      SSS: pad(c.millisecond, 3), S: String(c.millisecond), a: c.hour < 12 ? 'AM' : 'PM',
      ZZ: offsetText(self.offset, true), ZZZ: offsetText(self.offset, false), Z: self.offset === 0 ? '+0' : offsetText(self.offset, true),
      z: self.zoneName, q: String(Math.ceil(c.month / 3)), X: String(Math.floor(self.ts / 1000)), x: String(self.ts),
      o: String(self.ordinal), ooo: pad(self.ordinal, 3), kkkk: pad(c.year, 4), WW: pad(isoWeek(self)), W: String(isoWeek(self)),
    };
    var out = '';
    var s = String(fmt);
    for (var i = 0; i < s.length; ) {
      if (s[i] === "'") {
        var j = s.indexOf("'", i + 1);
        if (j < 0) j = s.length;
        out += j === i + 1 ? "'" : s.slice(i + 1, j);
        i = j + 1;
        continue;
      }
      var run = 1;
      while (s[i + run] === s[i]) run++;
      var tok = s.substr(i, run);
      if (map[tok] !== undefined) out += map[tok];
      else if (/[A-Za-z]/.test(s[i])) fail('The format token "' + tok + '" is not supported here');
      else out += tok;
      i += run;
    }
    return out;
  };
  var isoWeek = function (dt) {
    var d = new Date(Date.UTC(dt.c.year, dt.c.month - 1, dt.c.day));
    d.setUTCDate(d.getUTCDate() + 4 - dt.c.weekday);
    var y0 = new Date(Date.UTC(d.getUTCFullYear(), 0, 1));
    return Math.ceil(((d - y0) / 86400000 + 1) / 7);
  };
  DT.prototype.toLocaleString = function (f) {
    if (!this.isValid) return 'Invalid DateTime';
    var c = this.c;
    if (f && f.month === 'long') return MONTHS[c.month - 1] + ' ' + c.day + ', ' + c.year;
    if (f && f.month === 'short') return MONTHS[c.month - 1].slice(0, 3) + ' ' + c.day + ', ' + c.year;
    var date = c.month + '/' + c.day + '/' + c.year;
    if (f && f.hour) return date + ', ' + this.toFormat('h:mm a');
    return date;
  };
  DT.DATE_SHORT = {};
  DT.DATE_MED = { month: 'short' };
  DT.DATE_FULL = { month: 'long' };
  DT.DATETIME_SHORT = { hour: 'numeric' };
  var shift = function (dt, dur, sign) {
    var v = dur instanceof Duration ? dur.values : typeof dur === 'number' ? { milliseconds: dur } : Duration.fromObject(dur).values;
    var c = dt.toObject();
    var months = sign * ((v.years || 0) * 12 + (v.quarters || 0) * 3 + (v.months || 0));
    if (months) {
      var total = c.year * 12 + (c.month - 1) + months;
      c.year = Math.floor(total / 12);
      c.month = (total % 12) + 1;
      var last = new Date(Date.UTC(c.year, c.month, 0)).getUTCDate();
      if (c.day > last) c.day = last;
    }
    c.day += sign * ((v.weeks || 0) * 7 + (v.days || 0));
    var moved = fromParts(c, dt.offset);
    var ms = sign * ((v.hours || 0) * 3600000 + (v.minutes || 0) * 60000 + (v.seconds || 0) * 1000 + (v.milliseconds || 0));
    return new DT(moved.ts + ms, dt.offset);
  };
  var durationArgs = function (a, b) { return typeof a === 'number' && typeof b === 'string' ? (function () { var o = {}; o[unitName(b)] = a; return o; })() : a; };
  DT.prototype.plus = function (d, u) { return shift(this, durationArgs(d, u), 1); };
  DT.prototype.minus = function (d, u) { return shift(this, durationArgs(d, u), -1); };
  DT.prototype.set = function (o) { var c = this.toObject(); for (var k in o) c[k] = o[k]; return fromParts(c, this.offset); };
  DT.prototype.startOf = function (unit) {
    var u = unitName(unit);
    var c = this.toObject();
    var order = ['years', 'months', 'days', 'hours', 'minutes', 'seconds'];
    if (u === 'weeks') return this.startOf('day').minus({ days: this.c.weekday - 1 });
    if (u === 'quarters') { c.month = (Math.ceil(c.month / 3) - 1) * 3 + 1; u = 'months'; }
    var keys = ['month', 'day', 'hour', 'minute', 'second', 'millisecond'];
    var base = { month: 1, day: 1, hour: 0, minute: 0, second: 0, millisecond: 0 };
    for (var i = order.indexOf(u); i >= 0 && i < keys.length; i++) c[keys[i]] = base[keys[i]];
    return fromParts(c, this.offset);
  };
  DT.prototype.endOf = function (unit) { return this.startOf(unit).plus(Duration.fromObject(durationArgs(1, unit))).minus(1); };
  DT.prototype.diff = function (other, unit) {
    var ms = this.ts - toDT(other).ts;
    if (unit === undefined) return Duration.fromMillis(ms);
    var units = Array.isArray(unit) ? unit : [unit];
    var o = {};
    var rest = ms;
    units.map(unitName).forEach(function (u, i) {
      var size = Duration.fromObject(durationArgs(1, u)).toMillis();
      o[u] = i === units.length - 1 ? rest / size : Math.trunc(rest / size);
      rest -= o[u] * size;
    });
    return new Duration(o);
  };
  DT.prototype.diffNow = function (unit) { return this.diff(DT.now(), unit); };
  DT.prototype.equals = function (o) { return o instanceof DT && o.ts === this.ts && o.offset === this.offset; };
  DT.prototype.hasSame = function (o, unit) { return this.startOf(unit).ts === toDT(o).setZone(this.offset).startOf(unit).ts; };
  DT.prototype.toRelative = function () {
    var s = Math.round((this.ts - Date.now()) / 1000);
    var steps = [[31536000, 'year'], [2592000, 'month'], [86400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']];
    for (var i = 0; i < steps.length; i++) {
      var n = Math.trunc(Math.abs(s) / steps[i][0]);
      if (n >= 1 || i === steps.length - 1) {
        var text = n + ' ' + steps[i][1] + (n === 1 ? '' : 's');
        return s < 0 ? text + ' ago' : 'in ' + text;
      }
    }
  };
  // The external tool's extensions of dates.
  DT.prototype.format = DT.prototype.toFormat;
  DT.prototype.beginningOf = DT.prototype.startOf;
  DT.prototype.endOfMonth = function () { return this.endOf('month'); };
  DT.prototype.isWeekend = function () { return this.c.weekday >= 6; };
  DT.prototype.isBetween = function (a, b) { var x = toDT(a).ts, y = toDT(b).ts; return this.ts > Math.min(x, y) && this.ts < Math.max(x, y); };
  DT.prototype.isInLast = function (n, unit) { return this.ts >= DT.now().minus(durationArgs(n || 1, unit || 'minutes')).ts && this.ts <= Date.now(); };
  DT.prototype.extract = function (unit) { var u = unitName(unit || 'week').slice(0, -1); return u === 'week' ? isoWeek(this) : u === 'quarter' ? this.quarter : this.c[u]; };
  DT.prototype.toDateTime = function () { return this; };
  var toDT = function (v) {
    if (v instanceof DT) return v;
    if (v instanceof Date) return DT.fromJSDate(v);
    if (typeof v === 'number') return DT.fromMillis(v);
    if (typeof v === 'string') {
      var dt = DT.fromISO(v);
      if (dt.isValid) return dt;
      var t = Date.parse(v);
      if (isFinite(t)) return new DT(t, 0);
    }
    fail('Cannot convert ' + JSON.stringify(v) + ' to a date');
  };

  // ----- data-transformation methods ------------------------------------------------------
  var S = String.prototype, N = Number.prototype, A = Array.prototype, O = Object.prototype;
  var URL_RE = /(?:https?:\/\/|www\.)[^\s"'<>]+/i;
  var EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;
  var words = function (s) { return String(s).replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[^A-Za-z0-9]+/).filter(Boolean); };
  var B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  var utf8 = function (s) { return unescape(encodeURIComponent(s)); };
  def(S, 'isEmpty', function () { return this.length === 0; });
  def(S, 'isNotEmpty', function () { return this.length > 0; });
  def(S, 'extractDomain', function () {
    var s = String(this).trim();
    var m = /@([A-Za-z0-9.-]+\.[A-Za-z]{2,})/.exec(s);
    if (m && !/^[a-z]+:\/\//i.test(s)) return m[1];
    m = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^@\/\s]*@)?([^:\/?#\s]+)/i.exec(s);
    return m ? m[1] : undefined;
  });
  def(S, 'extractEmail', function () { var m = EMAIL_RE.exec(this); return m ? m[0] : undefined; });
  def(S, 'extractUrl', function () { var m = URL_RE.exec(this); return m ? m[0] : undefined; });
  def(S, 'extractUrlPath', function () { var m = /^[a-z][a-z0-9+.-]*:\/\/[^\/?#]+([^?#]*)/i.exec(this); return m ? m[1] || '/' : undefined; });
  def(S, 'isEmail', function () { return new RegExp('^' + EMAIL_RE.source + '$').test(this); });
  def(S, 'isUrl', function () { return /^[a-z][a-z0-9+.-]*:\/\/[^\s\/?#]+[^\s]*$/i.test(this); });
  def(S, 'isDomain', function () { return /^(?!-)[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,}$/.test(this); });
  def(S, 'isNumeric', function () { return this.trim() !== '' && !isNaN(Number(this)); });
  def(S, 'toNumber', function () { var n = Number(this); if (isNaN(n)) fail('toNumber() can only be called on numeric strings'); return n; });
  def(S, 'toInt', function () { return parseInt(this, 10); });
  def(S, 'toFloat', function () { return parseFloat(this); });
  def(S, 'toBoolean', function () { var s = this.trim().toLowerCase(); return !(s === '' || s === 'false' || s === '0' || s === 'no' || s === 'n' || s === 'off'); });
  def(S, 'toDateTime', function (fmt) { return fmt ? DT.fromFormat(this, fmt) : toDT(String(this)); });
  def(S, 'toDate', function () { return new Date(String(this)); });
  def(S, 'toTitleCase', function () { return this.replace(/\w\S*/g, function (w) { return w.charAt(0).toUpperCase() + w.slice(1).toLowerCase(); }); });
  def(S, 'toSentenceCase', function () { var s = this.toLowerCase(); return s.charAt(0).toUpperCase() + s.slice(1); });
  def(S, 'toSnakeCase', function () { return words(this).join('_').toLowerCase(); });
  def(S, 'toCamelCase', function () { return words(this).map(function (w, i) { w = w.toLowerCase(); return i ? w.charAt(0).toUpperCase() + w.slice(1) : w; }).join(''); });
  def(S, 'toKebabCase', function () { return words(this).join('-').toLowerCase(); });
  def(S, 'removeTags', function () { return this.replace(/<[^>]*>?/g, ''); });
  def(S, 'removeMarkdown', function () {
    return this.replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/^#{1,6}\s*/gm, '').replace(/(\*\*|__|\*|_|~~|\x60)/g, '').replace(/^\s*[-*+]\s+/gm, '').replace(/^\s*>\s?/gm, '');
  });
  def(S, 'replaceSpecialChars', function () { return this.normalize('NFD').replace(/[\u0300-\u036f]/g, ''); });
  def(S, 'urlEncode', function (all) { return all ? encodeURIComponent(this) : encodeURI(this); });
  def(S, 'urlDecode', function (all) { return all ? decodeURIComponent(this) : decodeURI(this); });
  def(S, 'quote', function (q) { q = q || '"'; return q + this.split(q).join('\\' + q) + q; });
  def(S, 'parseJson', function () { return JSON.parse(this); });
  def(S, 'toJsonString', function () { return JSON.stringify(String(this)); });
  def(S, 'base64Encode', function () {
    var s = utf8(this), out = '';
    for (var i = 0; i < s.length; i += 3) {
      var n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0);
      out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] + (i + 1 < s.length ? B64[(n >> 6) & 63] : '=') + (i + 2 < s.length ? B64[n & 63] : '=');
    }
    return out;
  });
  def(S, 'base64Decode', function () {
    var s = this.replace(/[^A-Za-z0-9+\/]/g, ''), out = '';
    for (var i = 0; i < s.length; i += 4) {
      var n = (B64.indexOf(s[i]) << 18) | (B64.indexOf(s[i + 1]) << 12) | ((B64.indexOf(s[i + 2]) & 63) << 6) | (B64.indexOf(s[i + 3]) & 63);
      out += String.fromCharCode((n >> 16) & 255);
      if (i + 2 < s.length) out += String.fromCharCode((n >> 8) & 255);
      if (i + 3 < s.length) out += String.fromCharCode(n & 255);
    }
    return decodeURIComponent(escape(out));
  });
  def(S, 'hash', function () { fail('hash() is not available in expressions here: use a Crypto node'); });

  def(N, 'round', function (d) { var f = Math.pow(10, d || 0); return Math.round(this * f) / f; });
  def(N, 'floor', function () { return Math.floor(this); });
  def(N, 'ceil', function () { return Math.ceil(this); });
  def(N, 'abs', function () { return Math.abs(this); });
  def(N, 'isEven', function () { if (!Number.isInteger(+this)) fail('isEven() is only callable on integers'); return this % 2 === 0; });
  def(N, 'isOdd', function () { if (!Number.isInteger(+this)) fail('isOdd() is only callable on integers'); return Math.abs(this % 2) === 1; });
  def(N, 'isInteger', function () { return Number.isInteger(+this); });
  def(N, 'toBoolean', function () { return +this !== 0; });
  def(N, 'toDateTime', function (f) { return f === 's' ? DT.fromSeconds(+this) : f === 'us' ? DT.fromMillis(this / 1000) : DT.fromMillis(+this); });
  def(N, 'format', function () { return String(+this).replace(/\B(?=(\d{3})+(?!\d))/g, ','); });

  var sameJson = function (a, b) { return JSON.stringify(a) === JSON.stringify(b); };
  var uniqueBy = function (list, keys) {
    var seen = [];
    return list.filter(function (x) {
      var k = keys.length ? JSON.stringify(keys.map(function (f) { return x && x[f]; })) : JSON.stringify(x);
      if (seen.indexOf(k) >= 0) return false;
      seen.push(k);
      return true;
    });
  };
  var numbers = function (list, name) {
    return list.map(function (x) { if (typeof x !== 'number') fail(name + '() is only callable on arrays of numbers'); return x; });
  };
  def(A, 'isEmpty', function () { return this.length === 0; });
  def(A, 'isNotEmpty', function () { return this.length > 0; });
  def(A, 'first', function () { return this[0]; });
  def(A, 'last', function () { return this[this.length - 1]; });
  def(A, 'sum', function () { return numbers(this, 'sum').reduce(function (a, b) { return a + b; }, 0); });
  def(A, 'average', function () { var l = numbers(this, 'average'); return l.length ? l.reduce(function (a, b) { return a + b; }, 0) / l.length : NaN; });
  def(A, 'max', function () { return Math.max.apply(null, numbers(this, 'max')); });
  def(A, 'min', function () { return Math.min.apply(null, numbers(this, 'min')); });
  def(A, 'removeDuplicates', function () { return uniqueBy(this, A.slice.call(arguments)); });
  def(A, 'unique', A.removeDuplicates);
  def(A, 'compact', function () { return this.filter(function (x) { return x !== null && x !== undefined && x !== '' && !(typeof x === 'number' && isNaN(x)); }).map(function (x) { return isObj(x) ? x.compact() : x; }); });
  def(A, 'pluck', function () {
    var fields = A.slice.call(arguments);
    return this.filter(isObj).map(function (x) {
      if (fields.length === 1) return x[fields[0]];
      var o = {};
      fields.forEach(function (f) { if (f in x) o[f] = x[f]; });
      return o;
    }).filter(function (x) { return x !== undefined; });
  });
  def(A, 'chunk', function (n) { var out = []; for (var i = 0; i < this.length; i += n) out.push(this.slice(i, i + n)); return out; });
  def(A, 'difference', function (o) { return this.filter(function (x) { return !o.some(function (y) { return sameJson(x, y); }); }); });
  def(A, 'intersection', function (o) { return uniqueBy(this.filter(function (x) { return o.some(function (y) { return sameJson(x, y); }); }), []); });
  def(A, 'union', function (o) { return uniqueBy(this.concat(o), []); });
  def(A, 'merge', function () { return this.reduce(function (a, x) { return isObj(x) ? Object.assign(a, x) : a; }, {}); });
  def(A, 'smartJoin', function (k, v) { var o = {}; this.forEach(function (x) { if (isObj(x)) o[x[k]] = x[v]; }); return o; });
  def(A, 'renameKeys', function (from, to) { return this.map(function (x) { return isObj(x) ? x.renameKeys(from, to) : x; }); });
  def(A, 'randomItem', function () { return this[Math.floor(Math.random() * this.length)]; });
  def(A, 'toJsonString', function () { return JSON.stringify(this); });
  def(A, 'sortBy', function (f) { return this.slice().sort(function (a, b) { return a[f] < b[f] ? -1 : a[f] > b[f] ? 1 : 0; }); });

  def(O, 'isEmpty', function () { return Object.keys(this).length === 0; });
  def(O, 'isNotEmpty', function () { return Object.keys(this).length > 0; });
  def(O, 'hasField', function (k) { return Object.prototype.hasOwnProperty.call(this, k); });
  def(O, 'removeField', function (k) { var o = Object.assign({}, this); delete o[k]; return o; });
  def(O, 'removeFieldsContaining', function (t) { var o = {}; for (var k in this) if (!(typeof this[k] === 'string' && this[k].indexOf(t) >= 0)) o[k] = this[k]; return o; });
  def(O, 'keepFieldsContaining', function (t) { var o = {}; for (var k in this) if (typeof this[k] === 'string' && this[k].indexOf(t) >= 0) o[k] = this[k]; return o; });
  def(O, 'compact', function () { var o = {}; for (var k in this) { var v = this[k]; if (v !== null && v !== undefined && v !== '') o[k] = isObj(v) ? v.compact() : v; } return o; });
  def(O, 'keys', function () { return Object.keys(this); });
  def(O, 'values', function () { return Object.values(this); });
  def(O, 'toJsonString', function () { return JSON.stringify(this); });
  def(O, 'urlEncode', function () { var self = this; return Object.keys(this).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(String(self[k])); }).join('&'); });
  def(O, 'merge', function (o) { return Object.assign({}, o, this); });
  def(O, 'renameKeys', function (from, to) { var o = {}; for (var k in this) o[k === from ? to : k] = this[k]; return o; });
  def(Date.prototype, 'toDateTime', function () { return DT.fromJSDate(this); });
  def(Date.prototype, 'isWeekend', function () { return this.getUTCDay() === 0 || this.getUTCDay() === 6; });
  def(Date.prototype, 'format', function (f) { return DT.fromJSDate(this).toFormat(f); });
  def(Boolean.prototype, 'toNumber', function () { return this ? 1 : 0; });
  def(Boolean.prototype, 'toInt', function () { return this ? 1 : 0; });

  // ----- $jmespath (a subset) ----------------------------------------------------------------
  var jmespath = function (data, expr) {
    if (typeof expr !== 'string') fail('$jmespath() needs the query as its second argument');
    var toks = expr.match(/\[\*\]|\[\]|\[-?\d+\]|\.|[A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\]|\\.)*"|\S/g) || [];
    var project = false;
    var cur = data;
    var step = function (v, t) {
      if (v === null || v === undefined) return null;
      if (/^\[-?\d+\]$/.test(t)) { if (!Array.isArray(v)) return null; var i = Number(t.slice(1, -1)); var x = v[i < 0 ? v.length + i : i]; return x === undefined ? null : x; }
      var k = t[0] === '"' ? JSON.parse(t) : t;
      if (!isObj(v)) return null;
      return v[k] === undefined ? null : v[k];
    };
    for (var i = 0; i < toks.length; i++) {
      var t = toks[i];
      if (t === '.') continue;
      if (t === '[*]' || t === '[]') {
        if (!Array.isArray(cur)) return null;
        if (t === '[]') cur = cur.reduce(function (a, x) { return a.concat(Array.isArray(x) ? x : [x]); }, []);
        project = true;
        continue;
      }
      if (!/^(\[-?\d+\]|[A-Za-z_][A-Za-z0-9_]*|".*")$/.test(t)) fail('$jmespath(): "' + t + '" is not supported here (paths, [n], [*] and [] only)');
      cur = project ? cur.map(function (x) { return step(x, t); }).filter(function (x) { return x !== null; }) : step(cur, t);
    }
    return cur === undefined ? null : cur;
  };

  // ----- the globals --------------------------------------------------------------------------
  var refused = function (name, why) {
    var o = {};
    return new Proxy(o, { get: function () { fail(name + ' ' + why); }, has: function () { return true; } });
  };
  var globals = function (ctx) {
    var item = function (json) { return { json: json === undefined ? {} : json, binary: {}, pairedItem: { item: 0 } }; };
    var current = item(ctx.input);
    var nodes = ctx.nodes || {};
    var named = function (name) {
      if (typeof name !== 'string') fail('$() needs a node name');
      if (!Object.prototype.hasOwnProperty.call(ctx.known || {}, name)) fail('Referenced node "' + name + '" does not exist');
      var ran = Object.prototype.hasOwnProperty.call(nodes, name);
      var get = function () {
        if (!ran) fail('Referenced node "' + name + '" is unexecuted: it has not run before this node in this run');
        return item(nodes[name]);
      };
      return {
        get item() { return get(); },
        first: function () { return get(); },
        last: function () { return get(); },
        all: function () { return [get()]; },
        itemMatching: function () { return get(); },
        pairedItem: function () { return get(); },
        get isExecuted() { return ran; },
        get json() { return get().json; },
        params: {},
        context: {},
        runIndex: 0,
      };
    };
    var input = {
      item: current,
      all: function () { return [current]; },
      first: function () { return current; },
      last: function () { return current; },
      params: {},
      context: { noItemsLeft: true },
    };
    var now = DT.now();
    return {
      $json: current.json,
      $binary: current.binary,
      $input: input,
      $: named,
      $node: new Proxy({}, { get: function (_, name) { return typeof name === 'string' ? named(name) : undefined; } }),
      $items: function (name) { return name === undefined ? [current] : named(name).all(); },
      $prevNode: { name: ctx.prevNode || '', outputIndex: 0, runIndex: 0 },
      $runIndex: 0,
      $itemIndex: 0,
      $position: 0,
      $workflow: { id: ctx.workflow && ctx.workflow.id, name: ctx.workflow && ctx.workflow.name, active: true },
      $execution: refused('$execution', 'is not available in expressions here yet (no execution id or resume URL): pass what you need as input'),
      $vars: refused('$vars', 'has no equivalent here: put the value into the workflow input or a credential'),
      $secrets: refused('$secrets', 'has no equivalent here: use a credential'),
      $env: refused('$env', 'is refused: expressions cannot read environment variables here. Store the value as a credential or pass it as input'),
      $now: now,
      $today: now.startOf('day'),
      $jmespath: jmespath,
      $if: function (c, a, b) { return c ? a : b; },
      $ifEmpty: function (v, d) {
        var empty = v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.keys(v).length === 0);
        return empty ? d : v;
      },
      $min: function () { return Math.min.apply(null, arguments); },
      $max: function () { return Math.max.apply(null, arguments); },
      DateTime: DT,
      Duration: Duration,
    };
  };
  // A template hole's value as the external tool renders it inside text.
  var text = function (v) {
    if (v === undefined || v === null) return '';
    if (v instanceof DT) return v.toISO();
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  };
  // A value leaving the sandbox: dates as ISO text, as the external tool stores them.
  var out = function (v) { return v instanceof DT ? v.toISO() : v; };
  return { globals: globals, text: text, out: out, DateTime: DT };
})();
`;

/**
 * First line of a code source that uses the runtime. The converter writes the directive, not
 * the runtime (about 37 000 characters): the runtime would otherwise sit in every converted
 * node's config, in the graph each run carries into Temporal, and in every code step's
 * activity input. `expandJsRuntime` puts it back where code runs (the code-node activity and
 * dry runs). The number is the runtime's version: a change that alters results gets a new
 * number, and the old version stays, so stored workflows keep evaluating as they were imported.
 */
export const JS_RUNTIME_DIRECTIVE = '//@extflow-expressions 1';

/**
 * The source with the runtime in place of its directive line; any other source unchanged.
 * Caveat: line numbers in error messages count the runtime's lines too.
 */
export function expandJsRuntime(source: string): string {
  if (!source.startsWith(`${JS_RUNTIME_DIRECTIVE}\n`)) return source;
  return JS_RUNTIME + source.slice(JS_RUNTIME_DIRECTIVE.length);
}

/** A graph whose code nodes carry their runtime (for dry runs, which interpret the graph in the sandbox host). */
export function withJsRuntime<G extends { nodes: Array<{ type: string; config?: Record<string, unknown> }> }>(graph: G): G {
  if (
    !graph.nodes.some((n) => n.type === 'code' && typeof n.config?.source === 'string' && n.config.source.startsWith(JS_RUNTIME_DIRECTIVE))
  )
    return graph;
  return {
    ...graph,
    nodes: graph.nodes.map((n) =>
      n.type === 'code' && typeof n.config?.source === 'string'
        ? { ...n, config: { ...n.config, source: expandJsRuntime(n.config.source) } }
        : n,
    ),
  };
}

/** The names the runtime binds for each expression, in the order `jsExpressions` passes them. */
export const JS_GLOBAL_NAMES = [
  '$json',
  '$binary',
  '$input',
  '$',
  '$node',
  '$items',
  '$prevNode',
  '$runIndex',
  '$itemIndex',
  '$position',
  '$workflow',
  '$execution',
  '$vars',
  '$secrets',
  '$env',
  '$now',
  '$today',
  '$jmespath',
  '$if',
  '$ifEmpty',
  '$min',
  '$max',
  'DateTime',
  'Duration',
] as const;
